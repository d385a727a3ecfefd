/*
 * lifecycle.h - bringing the profiler up in a process and down at its end.
 *
 * Hooks can fire before this object's constructor (from another library's
 * constructor), so every hook calls pi_ensure_init first; the first caller
 * does the set-up.
 */
#ifndef PI_LIFECYCLE_H
#define PI_LIFECYCLE_H

#include <stdatomic.h>

extern _Atomic int pi_init_complete;

void pi_init_slow(void);

/* pi_ensure_init - set the profiler up if no one has yet; cheap once done */
static inline void pi_ensure_init(void)
{
    if (__builtin_expect(!atomic_load_explicit(&pi_init_complete, memory_order_acquire), 0))
        pi_init_slow();
}

/* pi_install_signal_handlers - see signal_hooks.c */
void pi_install_signal_handlers(void);

#endif
