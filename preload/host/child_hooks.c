/*
 * child_hooks.c - wait, waitpid, wait4 and waitid: how each child the
 * process reaps ended. A child killed outright (SIGKILL, the OOM killer)
 * writes nothing of its end; its parent's wait is the one account of it.
 * Python's os.waitpid, subprocess and multiprocessing (DataLoader workers)
 * all come through here. Stopped and continued children are not ends.
 */
#include <errno.h>
#include <sys/wait.h>

#include "core/hook.h"

static void reaped(pid_t child, int status)
{
    if (child <= 0 || !(WIFEXITED(status) || WIFSIGNALED(status)) || !pi_hook_active())
        return;
    int saved = errno;
    pi_emit(PI_REC_CHILD_STATUS, 0, pi_clock_ticks(), 0, (uint64_t)child, (uint32_t)status, 0);
    errno = saved;
}

PI_EXPORT pid_t wait(int *status)
{
    int own = 0;
    int *at = status ? status : &own;
    pid_t child = PI_REAL(wait)(at);
    reaped(child, *at);
    return child;
}

PI_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    int own = 0;
    int *at = status ? status : &own;
    pid_t child = PI_REAL(waitpid)(pid, at, options);
    reaped(child, *at);
    return child;
}

PI_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
    int own = 0;
    int *at = status ? status : &own;
    pid_t child = PI_REAL(wait4)(pid, at, options, usage);
    reaped(child, *at);
    return child;
}

/* waitid tells it as a siginfo; WNOWAIT leaves the child to be reaped (and said) later */
PI_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    int result = PI_REAL(waitid)(type, id, info, options);
    if (result != 0 || !info || (options & WNOWAIT) || info->si_pid <= 0)
        return result;
    int status = info->si_code == CLD_EXITED  ? (info->si_status & 0xff) << 8
                 : info->si_code == CLD_KILLED ? info->si_status & 0x7f
                 : info->si_code == CLD_DUMPED ? (info->si_status & 0x7f) | 0x80
                                               : -1;
    if (status != -1)
        reaped(info->si_pid, status);
    return result;
}
