/*
 * prog_unseen_block BLOCK_MS SPIN_MS: a thread blocks BLOCK_MS in a futex
 * wait made as a bare system call (no hook sees it: runtimes of Rust,
 * OpenMP and C++ wait that way), computes SPIN_MS, then exits; the main
 * thread then does the same and the process ends. Each prints
 * "tid cpu_ns blocked_ns ready_ns": its CPU time by its own clock
 * (CLOCK_THREAD_CPUTIME_ID), the wait's length (CLOCK_MONOTONIC), and how
 * long it was ready to run without a CPU while it computed (a loaded machine).
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long block_ms = 300, spin_ms = 200;

static long long read_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *block_then_spin(void *unused)
{
    (void)unused;
    int word = 0;
    struct timespec length = {block_ms / 1000, (block_ms % 1000) * 1000000L};
    long long start = read_ns(CLOCK_MONOTONIC);
    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &length, NULL, 0); /* times out */
    long long blocked = read_ns(CLOCK_MONOTONIC) - start;
    volatile unsigned long long spins = 0;
    long long spin_start = read_ns(CLOCK_MONOTONIC), spin_cpu = read_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long long end = spin_start + spin_ms * 1000000LL; read_ns(CLOCK_MONOTONIC) < end;)
        spins++;
    /* of the spin's wall time, what the thread spent ready to run without a CPU */
    long long cpu = read_ns(CLOCK_THREAD_CPUTIME_ID);
    long long ready = (read_ns(CLOCK_MONOTONIC) - spin_start) - (cpu - spin_cpu);
    /* written with write(2), which the I/O hooks see: a record of this thread's own */
    char line[128];
    int n = snprintf(line, sizeof(line), "%ld %lld %lld %lld\n", syscall(SYS_gettid), cpu,
                     blocked, ready);
    if (write(STDOUT_FILENO, line, (size_t)n) != n)
        exit(1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 2) {
        block_ms = atol(argv[1]);
        spin_ms = atol(argv[2]);
    }
    pthread_t thread;
    pthread_create(&thread, NULL, block_then_spin, NULL);
    pthread_join(thread, NULL); /* a futex wait in glibc: unseen too */
    block_then_spin(NULL);
    return 0;
}
