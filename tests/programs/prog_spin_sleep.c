/*
 * prog_spin_sleep SPIN_MS SLEEP_MS: computes for SPIN_MS, sleeps for
 * SLEEP_MS, then prints the CPU time (ns) every thread but its own main
 * thread has used, read from /proc/self/task/TID/schedstat. It starts no
 * thread itself: under the preload those are the profiler's.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    double spin = atof(argv[1]), sleep_ms = atof(argv[2]);
    unsigned long sink = 0;
    for (double start = now_ms(); now_ms() - start < spin;)
        for (int i = 0; i < 10000; i++) {
            sink += (unsigned long)i * i;
            __asm__ volatile("" : "+r"(sink)); /* the work is kept */
        }
    struct timespec pause = {(time_t)(sleep_ms / 1000), (long)((long)sleep_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);

    unsigned long long others = 0;
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *d;
    while (tasks && (d = readdir(tasks))) {
        if (d->d_name[0] == '.' || atoi(d->d_name) == getpid())
            continue;
        char path[300];
        snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", d->d_name);
        FILE *f = fopen(path, "r");
        unsigned long long ns = 0;
        if (f && fscanf(f, "%llu", &ns) == 1)
            others += ns;
        if (f)
            fclose(f);
    }
    if (tasks)
        closedir(tasks);
    printf("%llu\n", others);
    return 0;
}
