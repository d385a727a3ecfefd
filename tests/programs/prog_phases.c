/*
 * prog_phases: the main thread spends about PHASE_MS (argv[1]) in each of
 * four ways, one after the other: blocked reading a pipe that a thread
 * fills late, computing, blocked on a condition that the thread signals
 * late, then asleep. It prints each phase's start and end (CLOCK_MONOTONIC
 * ns): the truth for the report's threads over time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long phase_ms = 600;
static int pipe_fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int signalled;

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void *late_helper(void *arg)
{
    (void)arg;
    sleep_ms(phase_ms);
    if (write(pipe_fds[1], "x", 1) != 1)
        exit(1);
    sleep_ms(2 * phase_ms); /* the main thread computes meanwhile, then waits again */
    pthread_mutex_lock(&lock);
    signalled = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        phase_ms = atol(argv[1]);
    if (pipe(pipe_fds) != 0)
        return 1;
    pthread_t helper;
    unsigned long long start = now_ns();
    pthread_create(&helper, NULL, late_helper, NULL);
    char byte;
    if (read(pipe_fds[0], &byte, 1) != 1)
        return 1;
    unsigned long long io_end = now_ns();
    struct timespec cpu_start, cpu_stop;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
    volatile unsigned long long spin = 0;
    while (now_ns() - io_end < (unsigned long long)phase_ms * 1000000ull)
        spin++;
    unsigned long long cpu_end = now_ns();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_stop);
    pthread_mutex_lock(&lock);
    while (!signalled)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    unsigned long long wait_end = now_ns();
    pthread_join(helper, NULL);
    unsigned long long sleep_start = now_ns();
    sleep_ms(phase_ms);
    unsigned long long sleep_end = now_ns();
    printf("other_io %llu %llu\ncpu %llu %llu\nlock_wait %llu %llu\nsleep %llu %llu\n", start,
           io_end, io_end, cpu_end, cpu_end, wait_end, sleep_start, sleep_end);
    /* what the spin got of a CPU: on a loaded machine, part of the phase is waiting for one */
    printf("cpu_clock %lld\n", (long long)(cpu_stop.tv_sec - cpu_start.tv_sec) * 1000000000ll +
                                     (cpu_stop.tv_nsec - cpu_start.tv_nsec));
    return 0;
}
