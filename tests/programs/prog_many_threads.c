/*
 * prog_many_threads DIR N M: N threads, all alive at once, each opens and
 * closes DIR/data.bin M times; prints "opened TOTAL" (its own count of
 * successful opens of the file, the one that creates it first included) and "rss_kb R", the process's resident memory while
 * every thread is still alive, from /proc/self/status.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[4096];
static long opens_per_thread;
static pthread_barrier_t all_started, all_done, may_exit;
static _Atomic long opened;

static void *run(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&all_started); /* every thread is alive before any opens */
    long mine = 0;
    for (long i = 0; i < opens_per_thread; i++) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            mine++;
            close(fd);
        }
    }
    atomic_fetch_add(&opened, mine);
    pthread_barrier_wait(&all_done);
    pthread_barrier_wait(&may_exit); /* alive until main has read its memory */
    return NULL;
}

static long resident_kb(void)
{
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (status && fgets(line, sizeof(line), status))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (status)
        fclose(status);
    return kb;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 64;
    snprintf(path, sizeof(path), "%s/data.bin", argv[1]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 1;
    close(fd);
    atomic_store(&opened, 1);
    int threads = atoi(argv[2]);
    opens_per_thread = atol(argv[3]);
    pthread_t *ids = calloc((size_t)threads, sizeof(*ids));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_barrier_init(&all_started, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&all_done, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&may_exit, NULL, (unsigned)threads + 1);
    for (int t = 0; t < threads; t++)
        if (pthread_create(&ids[t], &attr, run, NULL) != 0)
            return 2;
    pthread_barrier_wait(&all_started);
    pthread_barrier_wait(&all_done);
    long rss = resident_kb();
    pthread_barrier_wait(&may_exit);
    for (int t = 0; t < threads; t++)
        pthread_join(ids[t], NULL);
    printf("opened %ld\nrss_kb %ld\n", atomic_load(&opened), rss);
    return 0;
}
