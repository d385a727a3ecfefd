/*
 * prog_malloc_spin SECONDS: frees and allocates blocks too large for the
 * per-thread cache for SECONDS, so that its main thread is inside malloc,
 * holding the arena lock, much of the time; then prints "done". An idle
 * second thread makes malloc lock at all. Started without the profiler,
 * for the attach test: a call made into the C library from inside malloc
 * would wait for that lock forever.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    pthread_t thread;
    if (argc < 2 || pthread_create(&thread, NULL, idle, NULL) != 0)
        return 1;
    double seconds = atof(argv[1]);
    printf("started\n");
    fflush(stdout);
    void *kept[64] = {0};
    unsigned long turn = 0;
    for (double start = now(); now() - start < seconds;)
        for (int i = 0; i < 1000; i++, turn++) {
            free(kept[turn % 64]);
            kept[turn % 64] = malloc(2000 + (turn * 7919) % 60000);
        }
    printf("done\n");
    return 0;
}
