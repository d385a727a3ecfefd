/*
 * thread_hooks.c - thread lifetimes and names. A new thread records
 * THREAD_START with its creator; the recorder's thread-exit path records
 * THREAD_EXIT; pthread_setname_np and prctl(PR_SET_NAME) record names.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "callsite/native_sampler.h"
#include "core/hook.h"

struct thread_start {
    void *(*routine)(void *);
    void *arg;
    uint32_t creator;
};

static void *thread_trampoline(void *p)
{
    struct thread_start start = *(struct thread_start *)p;
    free(p);
    pi_emit(PI_REC_THREAD_START, 0, pi_clock_ticks(), 0, start.creator,
            (uint64_t)pthread_self(), 0);
    pi_native_sampler_thread_start();
    return start.routine(start.arg);
}

PI_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                             void *(*routine)(void *), void *arg)
{
    if (!pi_hook_active())
        return PI_REAL(pthread_create)(thread, attr, routine, arg);
    int guard = pi_guard_enter();
    struct thread_start *start = malloc(sizeof(*start));
    pi_guard_restore(guard);
    if (!start)
        return PI_REAL(pthread_create)(thread, attr, routine, arg);
    start->routine = routine;
    start->arg = arg;
    start->creator = pi_current_tid();
    int result = PI_REAL(pthread_create)(thread, attr, thread_trampoline, start);
    if (result != 0)
        free(start);
    return result;
}

static void record_name(const char *name, pthread_t thread)
{
    int saved = errno;
    int guard = pi_guard_enter();
    uint32_t id = pi_intern(name, strnlen(name, 64));
    pi_guard_restore(guard);
    pi_emit(PI_REC_THREAD_NAME, 0, pi_clock_ticks(), 0, id, (uint64_t)thread, 0);
    errno = saved;
}

PI_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
    if (!PI_REAL(pthread_setname_np))
        return ENOSYS;
    int result = PI_REAL(pthread_setname_np)(thread, name);
    if (result == 0 && pi_hook_active())
        record_name(name, pthread_equal(thread, pthread_self()) ? 0 : thread);
    return result;
}

PI_EXPORT int prctl(int option, ...)
{
    va_list args;
    va_start(args, option);
    unsigned long a2 = va_arg(args, unsigned long), a3 = va_arg(args, unsigned long),
                  a4 = va_arg(args, unsigned long), a5 = va_arg(args, unsigned long);
    va_end(args);
    int result = PI_REAL(prctl)(option, a2, a3, a4, a5);
    if (option == PR_SET_NAME && result == 0 && a2 && pi_hook_active())
        record_name((const char *)a2, 0);
    return result;
}
