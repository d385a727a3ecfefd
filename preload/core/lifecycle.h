/*
 * lifecycle.h - bringing the recorder up in a process and down at its end.
 *
 * Hooks can fire before this object's constructor (from another library's
 * constructor), so every hook calls pi_ensure_init first; the first caller
 * sets the core up: real functions, configuration, recorder, fatal-signal
 * handlers and the end of the trace at exit. The parts above the core
 * (control socket, attach) are started by the library's constructor
 * (library.c).
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

/**
 * pi_process_end - the process is ending: tell the parts (PI_EVENT_END),
 * record the end and write the trace out
 * @reason: PI_END_EXIT or PI_END__EXIT
 * @status: the exit status
 */
void pi_process_end(int reason, int status);

/* pi_ends_at_exit - nonzero when an on_exit handler will end the trace */
int pi_ends_at_exit(void);

#endif
