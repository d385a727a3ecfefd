/*
 * prog_thread_ends_late MS: a thread computes MS ms of CPU time, prints
 * "tid cpu_ns" (its own CPU clock, CLOCK_THREAD_CPUTIME_ID) and ends; the
 * main thread does not wait for it: 10 ms in, it calls exit(0), so the thread
 * ends while the process ends (as a Python thread does after a join, which
 * returns before the thread's own end).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long spin_ms;
static volatile unsigned long spun; /* the loop's work, kept */

static void *spin(void *unused)
{
    (void)unused;
    while (cpu_now() < spin_ms * 1000000LL)
        spun = spun + 1;
    char line[64];
    int n = snprintf(line, sizeof(line), "%d %lld\n", gettid(), cpu_now());
    if (write(1, line, (size_t)n) != n)
        return NULL;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 64;
    spin_ms = atol(argv[1]);
    pthread_t thread;
    if (pthread_create(&thread, NULL, spin, NULL) != 0)
        return 1;
    struct timespec pause = {0, 10000000};
    nanosleep(&pause, NULL);
    exit(0);
}
