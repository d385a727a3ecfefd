/*
 * process_hooks.c - fork, exec and exit: one trace file per process.
 *
 * fork children get a new file and writer; exec'd images start their own
 * file through the preload (the file before exec ends with an EXEC
 * record); _exit, which skips destructors, ends the file explicitly.
 * In a vfork child (posix_spawn, system) memory is shared with the parent,
 * so these hooks do nothing there: the pid differs from the recorder's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/hook.h"
#include "core/process_events.h"

#define EXEC_FLUSH_TIMEOUT_MS 2000
#define EXIT_FLUSH_TIMEOUT_MS 5000

PI_EXPORT pid_t fork(void)
{
    pi_ensure_init();
    uint64_t start = pi_clock_ticks();
    pid_t pid = pi_real_fork();
    if (pid == 0) {
        int guard = pi_guard_enter();
        pi_recorder_after_fork_child(); /* PI_EVENT_FORK_CHILD's handlers too */
        pi_guard_restore(guard);
        return 0;
    }
    int saved = errno;
    pi_emit(PI_REC_FORK, pid < 0 ? PI_FLAG_FAILED : 0, start, pi_clock_ticks() - start,
            (uint64_t)pid, 0, 0);
    errno = saved;
    return pid;
}

/* Record the exec and write everything out: the image is about to go. */
static uint32_t before_exec(const char *path)
{
    pi_ensure_init();
    if (!pi_recorder_owns_process())
        return 0;
    int saved = errno;
    int guard = pi_guard_enter();
    uint32_t id = pi_intern_cstr(path);
    pi_emit(PI_REC_EXEC, 0, pi_clock_ticks(), 0, id, 0, 0);
    pi_process_event_notify(PI_EVENT_BEFORE_EXEC);
    pi_recorder_flush_sync(EXEC_FLUSH_TIMEOUT_MS);
    pi_guard_restore(guard);
    errno = saved;
    return id;
}

/* exec returned: it failed, and the process goes on being traced. */
static int after_failed_exec(uint32_t path_id, int result)
{
    int saved = errno;
    if (pi_recorder_owns_process()) {
        pi_emit(PI_REC_EXEC, PI_FLAG_FAILED, pi_clock_ticks(), 0, path_id, (uint64_t)saved, 0);
        int guard = pi_guard_enter();
        pi_process_event_notify(PI_EVENT_EXEC_FAILED);
        pi_guard_restore(guard);
    }
    errno = saved;
    return result;
}

PI_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    uint32_t id = before_exec(path);
    return after_failed_exec(id, pi_real_execve(path, argv, envp));
}

PI_EXPORT int execv(const char *path, char *const argv[])
{
    uint32_t id = before_exec(path);
    return after_failed_exec(id, pi_real_execv(path, argv));
}

PI_EXPORT int execvp(const char *file, char *const argv[])
{
    uint32_t id = before_exec(file);
    return after_failed_exec(id, pi_real_execvp(file, argv));
}

PI_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    uint32_t id = before_exec(file);
    if (!pi_real_execvpe) {
        errno = ENOSYS;
        return after_failed_exec(id, -1);
    }
    return after_failed_exec(id, pi_real_execvpe(file, argv, envp));
}

PI_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    uint32_t id = before_exec("(fexecve)");
    if (!pi_real_fexecve) {
        errno = ENOSYS;
        return after_failed_exec(id, -1);
    }
    return after_failed_exec(id, pi_real_fexecve(fd, argv, envp));
}

/* The execl family is variadic: gather the list, then use the vector form. */
#define EXECL_MAX_ARGS 4096

/* The argument list after @first, up to its NULL, into @argv; 0, or -1 (E2BIG). */
static int gather_args(const char *first, va_list *args, char **argv)
{
    argv[0] = (char *)first;
    for (size_t count = 1; argv[count - 1] != NULL; count++) {
        if (count == EXECL_MAX_ARGS) {
            errno = E2BIG;
            return -1;
        }
        argv[count] = va_arg(*args, char *);
    }
    return 0;
}

/* @kind: 'v' execv, 'p' execvp, 'e' execve with the environment after the list */
#define EXECL_HOOK(name, kind)                                                                    \
    PI_EXPORT int name(const char *path, const char *arg, ...)                                    \
    {                                                                                             \
        char *argv[EXECL_MAX_ARGS];                                                               \
        va_list args;                                                                             \
        va_start(args, arg);                                                                      \
        int gathered = gather_args(arg, &args, argv);                                             \
        char *const *envp = kind == 'e' && gathered == 0 ? va_arg(args, char *const *) : NULL;   \
        va_end(args);                                                                             \
        if (gathered != 0)                                                                        \
            return -1;                                                                            \
        return kind == 'e' ? execve(path, argv, envp)                                             \
               : kind == 'p' ? execvp(path, argv)                                                 \
                             : execv(path, argv);                                                 \
    }

EXECL_HOOK(execl, 'v')
EXECL_HOOK(execlp, 'p')
EXECL_HOOK(execle, 'e')

/* _exit skips destructors: end the trace here (DataLoader workers leave this way). */
static void end_before__exit(int status)
{
    if (pi_recorder_owns_process())
        pi_process_end(PI_END__EXIT, status);
}

PI_EXPORT void _exit(int status)
{
    pi_ensure_init();
    end_before__exit(status);
    pi_real__exit(status);
    __builtin_unreachable();
}

PI_EXPORT void _Exit(int status)
{
    pi_ensure_init();
    end_before__exit(status);
    pi_real__Exit(status);
    __builtin_unreachable();
}
