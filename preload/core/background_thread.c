/*
 * background_thread.c - see background_thread.h. Each thread notes its
 * kernel thread id as it starts, so that its CPU time can be read through
 * the kernel's per-thread CPU clock without a handle that might dangle.
 */
#include "background_thread.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "real_functions.h"

#define MAX_THREADS 8

struct start {
    void *(*routine)(void *);
    void *arg;
    const char *name;
};

static struct start starts[MAX_THREADS];
static _Atomic int tids[MAX_THREADS];
static _Atomic int started;

static void *trampoline(void *slot_arg)
{
    int slot = (int)(intptr_t)slot_arg;
    atomic_store(&tids[slot], (int)syscall(SYS_gettid));
    /* named, so that top -H, perf and gdb tell the profiler's threads from the program's */
    syscall(SYS_prctl, PR_SET_NAME, starts[slot].name, 0, 0, 0); /* not the hooked prctl */
    return starts[slot].routine(starts[slot].arg);
}

int pi_background_thread(const char *name, void *(*routine)(void *), void *arg)
{
    int slot = atomic_fetch_add(&started, 1);
    if (slot >= MAX_THREADS) { /* more than we ever start: run it, uncounted */
        atomic_fetch_sub(&started, 1);
        slot = -1;
    } else {
        atomic_store(&tids[slot], 0);
        starts[slot] = (struct start){routine, arg, name};
    }
    /* the new thread inherits this mask: block everything around the create */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    /* the real pthread_create: the profiler's threads are not the application's */
    int result = slot < 0 ? PI_REAL(pthread_create)(&thread, &attr, routine, arg)
                          : PI_REAL(pthread_create)(&thread, &attr, trampoline,
                                                    (void *)(intptr_t)slot);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return result;
}

uint64_t pi_background_cpu_ns(void)
{
    uint64_t total = 0;
    int count = atomic_load(&started);
    for (int i = 0; i < count && i < MAX_THREADS; i++) {
        int tid = atomic_load(&tids[i]);
        /* a thread that has ended no longer counts: its clock is gone */
        if (tid > 0)
            total += pi_clock_thread_cpu_ns((uint32_t)tid);
    }
    return total;
}

int pi_background_thread_is_ours(uint32_t tid)
{
    int count = atomic_load(&started);
    for (int i = 0; i < count && i < MAX_THREADS; i++)
        if (atomic_load(&tids[i]) == (int)tid)
            return 1;
    return 0;
}

void pi_background_after_fork(void)
{
    for (int i = 0; i < MAX_THREADS; i++)
        atomic_store(&tids[i], 0);
    atomic_store(&started, 0);
}
