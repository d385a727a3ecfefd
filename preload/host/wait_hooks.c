/*
 * wait_hooks.c - lock and condition waits that actually block, and sleeps.
 *
 * A mutex is tried first: taking a free lock costs one trylock and
 * records nothing. Waits are recorded when they last at least the wait
 * threshold (PROFINJECT_WAIT_US, 20 us by default): on Python 3.11 the
 * GIL waits in pthread_cond_timedwait, threading locks in sem_clockwait,
 * multiprocessing locks in sem_timedwait.
 *
 * A sleep is time a thread spends neither computing nor waiting for
 * anyone: unrecorded, it would count as CPU, and a monitoring thread that
 * sleeps between its checks would look like one that competes with the
 * training loop for the GIL.
 */
#include <errno.h>

#include "callsite/call_sites.h"
#include "core/hook.h"

static inline void wait_record(unsigned kind, const void *object, uint64_t start, int result)
{
    uint64_t end = pi_clock_ticks();
    pi_wait_end();
    if (end - start < pi_wait_threshold_ticks)
        return;
    int saved = errno;
    uint16_t flags = result ? PI_FLAG_FAILED : 0;
    pi_emit(PI_REC_WAIT, flags, start, end - start, kind, (uint64_t)(uintptr_t)object,
            (uint64_t)(int64_t)result);
    /* Python's locks and queues wait in semaphores; the GIL and C++ locks do not */
    if (kind == PI_WAIT_SEM)
        pi_call_site_wait(PI_REC_WAIT, flags, kind, start, end - start);
    errno = saved;
}

/* A mutex that was taken when tried: wait for it, and record the wait. */
static __attribute__((noinline)) int mutex_lock_waiting(pthread_mutex_t *mutex)
{
    if (!pi_hook_active())
        return PI_REAL(pthread_mutex_lock)(mutex);
    uint64_t start = pi_clock_ticks();
    pi_wait_begin(PI_IN_FLIGHT_WAIT(PI_WAIT_MUTEX), (uint64_t)(uintptr_t)mutex, start);
    int result = PI_REAL(pthread_mutex_lock)(mutex);
    wait_record(PI_WAIT_MUTEX, mutex, start, result);
    return result;
}

/* Try first, whoever calls: a free mutex (almost every lock) costs the
 * try alone, with no frame of ours to set up, and whether to record is
 * asked only of a lock that waits. trylock gives what the blocking call
 * would for every mutex kind (recursive, error-checking, robust). */
PI_EXPORT int pthread_mutex_lock(pthread_mutex_t *mutex)
{
    int result = pthread_mutex_trylock(mutex);
    if (__builtin_expect(result != EBUSY, 1))
        return result; /* got it (or an error the blocking call would give too) */
    return mutex_lock_waiting(mutex);
}

/* A hook for a wait that returns 0 or an error number (pthread style). */
#define PI_WAIT_HOOK(name, kind, object, params, args)                                            \
    PI_EXPORT int name params                                                                     \
    {                                                                                             \
        if (!pi_hook_active() || !PI_REAL(name))                                                  \
            return PI_REAL(name) ? PI_REAL(name) args : ENOSYS;                                   \
        uint64_t start = pi_clock_ticks();                                                        \
        pi_wait_begin(PI_IN_FLIGHT_WAIT(kind), (uint64_t)(uintptr_t)(object), start);              \
        int result = PI_REAL(name) args;                                                          \
        wait_record(kind, object, start, result);                                                 \
        return result;                                                                            \
    }

PI_WAIT_HOOK(pthread_cond_wait, PI_WAIT_COND, cond, (pthread_cond_t *cond, pthread_mutex_t *m),
             (cond, m))
PI_WAIT_HOOK(pthread_cond_timedwait, PI_WAIT_COND, cond,
             (pthread_cond_t *cond, pthread_mutex_t *m, const struct timespec *at), (cond, m, at))
PI_WAIT_HOOK(pthread_cond_clockwait, PI_WAIT_COND, cond,
             (pthread_cond_t *cond, pthread_mutex_t *m, clockid_t clock, const struct timespec *at),
             (cond, m, clock, at))

/* A hook for a wait that returns -1 and sets errno (sem_*, nanosleep, usleep);
 * the record keeps errno as the result. */
#define PI_ERRNO_WAIT_HOOK(name, kind, object, params, args)                                      \
    PI_EXPORT int name params                                                                     \
    {                                                                                             \
        if (!pi_hook_active() || !PI_REAL(name)) {                                                \
            if (PI_REAL(name))                                                                    \
                return PI_REAL(name) args;                                                        \
            errno = ENOSYS;                                                                       \
            return -1;                                                                            \
        }                                                                                         \
        uint64_t start = pi_clock_ticks();                                                        \
        pi_wait_begin(PI_IN_FLIGHT_WAIT(kind), (uint64_t)(uintptr_t)(object), start);              \
        int result = PI_REAL(name) args;                                                          \
        wait_record(kind, object, start, result ? errno : 0);                                     \
        return result;                                                                            \
    }

/* glibc's semaphore (2.21 on, 64-bit): the value in the low half of its
 * first word, the number of threads waiting in the high half. A post that
 * finds one is recorded, before it wakes it; any other costs one load. */
PI_EXPORT int sem_post(sem_t *sem)
{
    if (pi_hook_active() &&
        __atomic_load_n((const uint64_t *)(const void *)sem, __ATOMIC_RELAXED) >> 32)
        pi_emit(PI_REC_WAKE, 0, pi_clock_ticks(), 0, (uint64_t)(uintptr_t)sem, 0, 0);
    return PI_REAL(sem_post)(sem);
}

PI_ERRNO_WAIT_HOOK(sem_wait, PI_WAIT_SEM, sem, (sem_t *sem), (sem))
PI_ERRNO_WAIT_HOOK(sem_timedwait, PI_WAIT_SEM, sem, (sem_t *sem, const struct timespec *at),
                   (sem, at))
PI_ERRNO_WAIT_HOOK(sem_clockwait, PI_WAIT_SEM, sem,
                   (sem_t *sem, clockid_t clock, const struct timespec *at), (sem, clock, at))

/* Sleeps. Python's time.sleep is clock_nanosleep from 3.11 on (select
 * before, an I/O wait); C++'s sleep_for is nanosleep. glibc's sleep and
 * usleep reach its nanosleep without the dynamic linker, so each is hooked
 * itself and recorded once. */
PI_ERRNO_WAIT_HOOK(nanosleep, PI_WAIT_SLEEP, NULL,
                   (const struct timespec *length, struct timespec *left), (length, left))
PI_ERRNO_WAIT_HOOK(usleep, PI_WAIT_SLEEP, NULL, (useconds_t microseconds), (microseconds))

/* returns an error number, like the pthread waits */
PI_WAIT_HOOK(clock_nanosleep, PI_WAIT_SLEEP, NULL,
             (clockid_t clock, int flags, const struct timespec *at, struct timespec *left),
             (clock, flags, at, left))

/* returns the seconds left when a signal cut it short */
PI_EXPORT unsigned sleep(unsigned seconds)
{
    if (!pi_hook_active())
        return PI_REAL(sleep)(seconds);
    uint64_t start = pi_clock_ticks();
    pi_wait_begin(PI_IN_FLIGHT_WAIT(PI_WAIT_SLEEP), 0, start);
    unsigned left = PI_REAL(sleep)(seconds);
    wait_record(PI_WAIT_SLEEP, NULL, start, left ? EINTR : 0);
    return left;
}
