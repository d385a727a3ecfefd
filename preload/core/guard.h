/*
 * guard.h - re-entrancy guard. While a thread runs profiler code, hooks
 * it reaches (through libc, zstd, dlsym...) go straight to the real
 * function. The previous value is saved and restored, so nesting is safe.
 */
#ifndef PI_GUARD_H
#define PI_GUARD_H

extern __thread int pi_guard_depth __attribute__((tls_model("initial-exec")));

/* pi_guard_enter - mark the thread as inside the profiler; returns the old value */
static inline int pi_guard_enter(void)
{
    int old = pi_guard_depth;
    pi_guard_depth = old + 1;
    return old;
}

/* pi_guard_restore - undo pi_guard_enter with the value it returned */
static inline void pi_guard_restore(int old)
{
    pi_guard_depth = old;
}

/* pi_guarded - nonzero when the calling thread is inside the profiler */
static inline int pi_guarded(void)
{
    return pi_guard_depth != 0;
}

#endif
