/*
 * prog_loader_lock - a thread that computes while it holds the loader's
 * list lock (inside a dl_iterate_phdr callback, as an unwinder or a module
 * scanner does), beside a main thread that computes: the case where a CPU
 * sample's walk, which may take that lock itself, must not wait for it
 * (seen: both threads waiting in their sample handlers for ever, the job
 * hung in seconds).
 *
 * The second thread repeats: 0.5 ms of CPU inside the callback, 0.5 ms
 * outside, until the main thread has computed 1.5 s in spin_main. Prints
 * one JSON line: each thread's tid and CPU by its own clock, and the second
 * thread's CPU inside the callback.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int done;
static volatile double sink;
static uint64_t locked_ns;

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void compute_for(uint64_t ns)
{
    uint64_t end = thread_cpu_ns() + ns;
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 100; i++)
            sink = sink * 0.5 + i;
}

static int inside_the_lock(struct dl_phdr_info *info, size_t size, void *unused)
{
    (void)info;
    (void)size;
    (void)unused;
    uint64_t start = thread_cpu_ns();
    compute_for(500000);
    locked_ns += thread_cpu_ns() - start;
    return 1;
}

struct scanner {
    long tid;
    uint64_t cpu_ns;
};

static void *scan(void *arg)
{
    struct scanner *s = arg;
    s->tid = syscall(SYS_gettid);
    while (!atomic_load(&done)) {
        dl_iterate_phdr(inside_the_lock, NULL);
        compute_for(500000);
    }
    s->cpu_ns = thread_cpu_ns();
    return NULL;
}

static __attribute__((noinline)) void spin_main(uint64_t ns)
{
    compute_for(ns);
}

int main(void)
{
    struct scanner s = {0, 0};
    pthread_t thread;
    if (pthread_create(&thread, NULL, scan, &s) != 0)
        return 1;
    spin_main(1500000000u);
    atomic_store(&done, 1);
    pthread_join(thread, NULL);
    printf("{\"main_tid\": %ld, \"main_cpu_ns\": %llu, \"scanner_tid\": %ld, "
           "\"scanner_cpu_ns\": %llu, \"scanner_locked_ns\": %llu}\n",
           (long)syscall(SYS_gettid), (unsigned long long)thread_cpu_ns(), s.tid,
           (unsigned long long)s.cpu_ns, (unsigned long long)locked_ns);
    return 0;
}
