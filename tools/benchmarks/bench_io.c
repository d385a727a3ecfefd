/*
 * bench_io FILE CALLS - ns per small pread of a cached file, as one
 * number on stdout (median of 9 runs). tools/bench runs it with and
 * without the preload; the difference is the I/O hook's cost.
 */
#include <fcntl.h>
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

int main(int argc, char **argv)
{
    if (argc != 3)
        return 64;
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
