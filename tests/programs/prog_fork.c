/*
 * prog_fork CHILDREN: while 4 threads record marks, the main thread forks
 * CHILDREN children; each records 1000 marks valued (child << 32 | i),
 * child = 100 + its index, and leaves with _exit(child index).
 * Thread marks are valued (thread << 32 | i), thread = 1..4.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profinject/profinject.h"

static atomic_int stop;

static void *busy(void *arg)
{
    uint64_t thread = (uint64_t)(uintptr_t)arg;
    /* a steady rate the writer keeps up with: this test is about fork, not overload */
    for (uint64_t i = 0; !atomic_load(&stop); i++) {
        PROFINJECT_MARK(NULL, thread << 32 | i);
        if (i % 100 == 99)
            usleep(100);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int children = argc > 1 ? atoi(argv[1]) : 3;
    pthread_t threads[4];
    for (int t = 0; t < 4; t++)
        pthread_create(&threads[t], NULL, busy, (void *)(uintptr_t)(t + 1));
    usleep(20000);
    int failures = 0;
    for (int c = 0; c < children; c++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (uint64_t i = 0; i < 1000; i++)
                PROFINJECT_MARK("child", (uint64_t)(100 + c) << 32 | i);
            _exit(c);
        }
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != c)
            failures++;
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < 4; t++)
        pthread_join(threads[t], NULL);
    return failures;
}
