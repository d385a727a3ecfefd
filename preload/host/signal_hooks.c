/*
 * signal_hooks.c - the application's sigaction() and signal() calls for
 * the signals whose end the profiler writes out (core/fatal_signals.c):
 * they change the chained disposition, and our handler stays in front.
 *
 * A vfork child's calls go to the kernel alone. Python's subprocess resets
 * every handler to SIG_DFL in its vfork child before exec; kept as the
 * chained disposition, in memory the child shares with its parent, that
 * reset would make the parent's own handlers (torchrun's SIGTERM, Python's
 * KeyboardInterrupt) never run again.
 */
#include <signal.h>
#include <string.h>

#include "core/fatal_signals.h"
#include "core/hook.h"

PI_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    pi_ensure_init();
    if (sig <= 0 || sig >= NSIG || !pi_fatal_signal_handled(sig) || pi_guarded() ||
        !pi_recorder_owns_process())
        return pi_real_sigaction(sig, act, old);
    return pi_fatal_signal_set(sig, act, old);
}

PI_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    pi_ensure_init();
    if (sig <= 0 || sig >= NSIG || !pi_fatal_signal_handled(sig) ||
        pi_recorder_state() != PI_STATE_RUNNING)
        return pi_real_signal(sig, handler);
    /* glibc's signal() has BSD semantics: restartable, not reset. */
    struct sigaction act, old;
    memset(&act, 0, sizeof(act));
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESTART;
    if (sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}
