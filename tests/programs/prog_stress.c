/*
 * prog_stress THREADS ITERATIONS: every hook family at once. Each worker
 * thread, per iteration, writes and reads 64 bytes through its own pipe,
 * opens, reads and closes a file, locks and unlocks a mutex all workers
 * share, and records a mark; it prints how many I/O calls and marks it
 * made ("tid io marks"). Meanwhile the main thread forks children (which
 * do a little of the same and _exit) and starts and joins short threads.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profinject/profinject.h"

static long iterations;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int workers_done;

static void *worker(void *arg)
{
    (void)arg;
    int p[2];
    if (pipe(p) != 0)
        return NULL;
    char buf[64] = {0};
    long io = 2; /* the pipe's two descriptors are closed at the end */
    long marks = 0;
    for (long i = 0; i < iterations; i++) {
        io += write(p[1], buf, sizeof(buf)) == (ssize_t)sizeof(buf);
        io += read(p[0], buf, sizeof(buf)) == (ssize_t)sizeof(buf);
        int fd = open("/proc/self/stat", O_RDONLY);
        if (fd >= 0) {
            io += 1 + (read(fd, buf, sizeof(buf)) >= 0) + (close(fd) == 0);
        }
        pthread_mutex_lock(&shared);
        pthread_mutex_unlock(&shared);
        PROFINJECT_MARK(NULL, (uint64_t)i);
        marks++;
    }
    close(p[0]);
    close(p[1]);
    pthread_mutex_lock(&print_lock);
    printf("%ld %ld %ld\n", (long)syscall(SYS_gettid), io, marks);
    pthread_mutex_unlock(&print_lock);
    atomic_fetch_add(&workers_done, 1);
    return NULL;
}

static void *short_lived(void *arg)
{
    (void)arg;
    PROFINJECT_MARK("short", 0);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 64;
    iterations = argc > 2 ? atol(argv[2]) : 2000;
    pthread_t *ids = calloc((size_t)threads, sizeof(pthread_t));
    for (int t = 0; t < threads; t++)
        pthread_create(&ids[t], NULL, worker, NULL);
    int children = 0, failures = 0;
    while (atomic_load(&workers_done) < threads) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 100; i++)
                PROFINJECT_MARK("child", (uint64_t)i);
            _exit(0);
        }
        int status;
        failures += pid < 0 || waitpid(pid, &status, 0) != pid || status != 0;
        children++;
        pthread_t t;
        if (pthread_create(&t, NULL, short_lived, NULL) == 0)
            pthread_join(t, NULL);
    }
    for (int t = 0; t < threads; t++)
        pthread_join(ids[t], NULL);
    fprintf(stderr, "children %d\n", children);
    return failures != 0;
}
