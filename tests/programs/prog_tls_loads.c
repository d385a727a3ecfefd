/*
 * prog_tls_loads - libraries with thread-local storage loaded while the main
 * thread computes inside malloc: the case where a signal handler that touches
 * a dynamic thread-local variable (as libunwind's unw_backtrace does) calls
 * malloc from inside malloc and waits for ever on the lock its own thread
 * holds (seen: a Python job hung in `import torch` under native CPU samples).
 *
 * The main thread allocates and frees blocks too large for malloc's
 * per-thread cache, so that most of its CPU time is spent holding the
 * arena's lock, until a second thread has loaded every library named on the
 * command line, one every millisecond. Prints one JSON line: the number
 * loaded, the main thread's tid and its CPU time by its own clock.
 *
 * Usage: prog_tls_loads LIBRARY...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int loaded, done;

struct paths {
    int count;
    char **names;
};

static void *load_all(void *arg)
{
    struct paths *p = arg;
    for (int i = 0; i < p->count; i++) {
        if (dlopen(p->names[i], RTLD_NOW | RTLD_LOCAL))
            atomic_fetch_add(&loaded, 1);
        else
            fprintf(stderr, "prog_tls_loads: %s\n", dlerror());
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    atomic_store(&done, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    struct paths p = {argc - 1, argv + 1};
    pthread_t loader;
    if (pthread_create(&loader, NULL, load_all, &p) != 0)
        return 1;
    while (!atomic_load(&done)) {
        for (int i = 0; i < 64; i++) {
            char *block = malloc(48 * 1024 + (size_t)i * 64);
            if (!block)
                return 1;
            block[0] = (char)i;
            __asm__ volatile("" : : "r"(block) : "memory"); /* the block escapes: kept */
            free(block);
        }
    }
    pthread_join(loader, NULL);
    struct timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    printf("{\"loaded\": %d, \"main_tid\": %ld, \"main_cpu_ns\": %lld}\n", atomic_load(&loaded),
           (long)syscall(SYS_gettid), (long long)cpu.tv_sec * 1000000000LL + cpu.tv_nsec);
    return atomic_load(&loaded) == p.count ? 0 : 1;
}
