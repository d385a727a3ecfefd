/* prog_threads N M [timed]: N threads each record M marks valued (thread << 32 | sequence);
 * with "timed", prints how long the threads took, in ns, after "done". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profinject/profinject.h"

static uint64_t marks_per_thread;

static void *run(void *arg)
{
    uint64_t thread = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < marks_per_thread; i++)
        PROFINJECT_MARK(NULL, thread << 32 | i);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4)
        return 64;
    struct timespec begin, end;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    int threads = atoi(argv[1]);
    marks_per_thread = strtoull(argv[2], NULL, 10);
    pthread_t ids[256];
    for (int t = 0; t < threads && t < 256; t++)
        pthread_create(&ids[t], NULL, run, (void *)(uintptr_t)(t + 1));
    for (int t = 0; t < threads && t < 256; t++)
        pthread_join(ids[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (argc == 4 && strcmp(argv[3], "timed") == 0)
        printf("done %lld\n", (long long)((end.tv_sec - begin.tv_sec) * 1000000000LL +
                                           (end.tv_nsec - begin.tv_nsec)));
    else
        printf("done\n");
    return 0;
}
