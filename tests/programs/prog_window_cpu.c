/*
 * prog_window_cpu WINDOWS: a thread that blocks in futex waits no hook sees
 * (30 ms) and computes (20 ms) in turn, for the whole run, after a second of
 * computing alone before the first window. The main thread opens WINDOWS
 * capture windows of 300 ms through the control signal, 200 ms apart; in the
 * second, another thread starts, computes 50 ms and ends. At the edges of
 * each window the main thread reads the threads' CPU clocks itself
 * (pthread_getcpuclockid). Prints, for each thread, "tid cpu_ns": its CPU
 * time inside the windows; the one that ended reads its own clock last.
 *
 * prog_window_cpu attach: the same thread, no windows: prints "started TID"
 * once its second of computing is over, with the first of the lines it
 * then prints every 10 ms, "MONOTONIC_NS CPU_NS": its CPU clock against
 * CLOCK_MONOTONIC, until killed.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "profinject/profinject.h"
#include "window_switch.h"

static atomic_int finished;
static long long short_cpu_ns;
static pid_t worker_tid, short_tid;

static long long read_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin(long ms)
{
    volatile unsigned long long spins = 0;
    for (long long end = read_ns(CLOCK_MONOTONIC) + ms * 1000000LL; read_ns(CLOCK_MONOTONIC) < end;)
        spins++;
}

static void *block_and_compute(void *unused)
{
    (void)unused;
    worker_tid = (pid_t)syscall(SYS_gettid);
    spin(1000); /* before any window: none of it is the windows' */
    while (!atomic_load(&finished)) {
        int word = 0;
        struct timespec length = {0, 30000000L};
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &length, NULL, 0); /* times out */
        spin(20);
    }
    return NULL;
}

static void *compute_and_end(void *unused)
{
    (void)unused;
    short_tid = (pid_t)syscall(SYS_gettid);
    spin(50);
    short_cpu_ns = read_ns(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

/* for attach: the thread's CPU clock over time, for whatever span a trace holds */
__attribute__((noreturn)) static void print_clock_until_killed(void)
{
    pthread_t worker;
    pthread_create(&worker, NULL, block_and_compute, NULL);
    clockid_t worker_clock;
    pthread_getcpuclockid(worker, &worker_clock);
    usleep(1100000);
    /* written with the first sample, in one write: the attach that follows the line starts
     * after a sample, however late this thread runs again (a loaded machine) */
    printf("started %d\n", worker_tid);
    for (;;) {
        printf("%lld %lld\n", read_ns(CLOCK_MONOTONIC), read_ns(worker_clock));
        fflush(stdout);
        usleep(10000);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "attach") == 0)
        print_clock_until_killed();
    int windows = argc > 1 ? atoi(argv[1]) : 3;
    if (!profinject_is_recording) {
        fprintf(stderr, "not under the profiler\n");
        return 1;
    }
    pthread_t worker, brief;
    pthread_create(&worker, NULL, block_and_compute, NULL);
    clockid_t worker_clock;
    pthread_getcpuclockid(worker, &worker_clock);
    usleep(1200000);
    long long worker_ns = 0, main_ns = 0;
    for (int i = 0; i < windows; i++) {
        switch_to(PI_CONTROL_SIGNAL_START, 1);
        long long worker_open = read_ns(worker_clock), main_open = read_ns(CLOCK_THREAD_CPUTIME_ID);
        if (i == 1)
            pthread_create(&brief, NULL, compute_and_end, NULL);
        usleep(300000);
        if (i == 1)
            pthread_join(brief, NULL);
        worker_ns += read_ns(worker_clock) - worker_open;
        main_ns += read_ns(CLOCK_THREAD_CPUTIME_ID) - main_open;
        switch_to(PI_CONTROL_SIGNAL_STOP, 0);
        usleep(200000);
    }
    atomic_store(&finished, 1);
    pthread_join(worker, NULL);
    printf("%d %lld\n%d %lld\n", worker_tid, worker_ns, (int)getpid(), main_ns);
    if (windows > 1)
        printf("%d %lld\n", short_tid, short_cpu_ns);
    return 0;
}
