/*
 * bench_io FILE CALLS [threads] - ns per small pread of a cached file, as
 * one number on stdout (median of 9 runs). tools/bench runs it with and
 * without the preload; the difference is the I/O hook's cost.
 *
 * With "threads", an idle second thread exists during the runs, as in
 * every PyTorch process: glibc then does cancellation bookkeeping around
 * each system call, which a single-threaded process skips and which the
 * profiler's writer thread would otherwise switch on (and be billed for).
 */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *idle(void *arg)
{
    (void)arg;
    pause();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4)
        return 64;
    pthread_t thread;
    if (argc == 4 && strcmp(argv[3], "threads") == 0)
        pthread_create(&thread, NULL, idle, NULL);
    int fd = open(argv[1], O_RDONLY);
    long calls = atol(argv[2]);
    char buf[64];
    double runs[9];
    for (int r = 0; r < 9; r++) {
        double start = now_ns();
        for (long i = 0; i < calls; i++)
            if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
                return 1;
        runs[r] = (now_ns() - start) / (double)calls;
    }
    qsort(runs, 9, sizeof(double), compare);
    printf("%.2f\n", runs[4]);
    return 0;
}
