/*
 * hook.h - what every hook file needs: export, the "should this call be
 * recorded" test and the real function (real_functions.h).
 *
 * A hook is thin: read the clock, call the real function, read the clock,
 * hand one record to the core. It records nothing while the calling thread
 * is inside the profiler (the guard) or while recording is off, and it
 * always leaves errno as the real function set it.
 */
#ifndef PI_HOOK_H
#define PI_HOOK_H

#include <stdatomic.h>

#include "clock.h"
#include "guard.h"
#include "lifecycle.h"
#include "real_functions.h"
#include "recorder.h"

#define PI_EXPORT __attribute__((visibility("default")))

/* pi_hook_active - set up if needed; nonzero when this call is to be recorded.
 * Recording is only ever on after set-up, so one load decides the common case. */
static inline int pi_hook_active(void)
{
    if (__builtin_expect(!atomic_load_explicit(&pi_recording, memory_order_relaxed), 0)) {
        pi_ensure_init();
        if (!atomic_load_explicit(&pi_recording, memory_order_relaxed))
            return 0;
    }
    return !pi_guarded();
}

#endif
