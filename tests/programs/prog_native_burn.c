/*
 * prog_native_burn - CPU spent in known functions, thread by thread, timed by
 * each thread's own CPU clock: the truth for native CPU samples.
 *
 * After 200 ms asleep (sampling starts at most 100 ms in), the main thread
 * runs burn_alpha then burn_gamma; two threads run
 * burn_beta; a third thread sleeps (no CPU, so no sample may name it); a
 * fork child runs burn_delta. Prints one JSON line: each thread's tid and
 * CPU nanoseconds per function, and the child's pid and CPU.
 *
 * With "exec", the main thread then computes 30 ms with every signal
 * blocked, so that its sampling timer's signal (SIGRTMIN + 6) is pending,
 * and execs a program that does not exist: the profiler must have taken the
 * signal before the exec, and the second JSON line says whether it is still
 * pending as the failed exec returns. Then it execs itself without the
 * preload, as "unblock": the new image unblocks every signal, and a sample's
 * signal still pending there (kernels before 6.13 keep it across the exec)
 * meets the default action, which ends the process.
 *
 * Usage: prog_native_burn MS_PER_UNIT [exec]
 *        prog_native_burn unblock
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long unit_ms;

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Arithmetic in the function itself, the clock read every 100000 rounds: the samples land in
 * it. A multiplier of its own each, or the compiler folds the four into one. */
#define BURN(name, multiplier)                                                                     \
    __attribute__((noinline)) static uint64_t name(uint64_t ns)                                    \
    {                                                                                              \
        volatile uint64_t x = 1;                                                                   \
        uint64_t start = thread_cpu_ns();                                                          \
        while (thread_cpu_ns() - start < ns)                                                       \
            for (int i = 0; i < 100000; i++)                                                       \
                x = x * (multiplier) + 1442695040888963407u;                                        \
        return thread_cpu_ns() - start;                                                            \
    }
BURN(burn_alpha, 6364136223846793005u)
BURN(burn_beta, 2862933555777941757u)
BURN(burn_gamma, 3202034522624059733u)
BURN(burn_delta, 3935559000370003845u)

struct worker {
    pthread_t thread;
    long tid;
    uint64_t ns;
    int sleeper;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    w->tid = syscall(SYS_gettid);
    if (w->sleeper)
        usleep((useconds_t)(unit_ms * 4000));
    else
        w->ns = burn_beta((uint64_t)unit_ms * 3000000u);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "unblock") == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        return 0;
    }
    unit_ms = argc > 1 ? atol(argv[1]) : 100;
    /* sampling starts at the profiler's first flush, at most 100 ms in */
    usleep(200000);
    struct worker workers[3] = {{0}, {0}, {.sleeper = 1}};
    for (int i = 0; i < 3; i++)
        pthread_create(&workers[i].thread, NULL, work, &workers[i]);
    uint64_t alpha = burn_alpha((uint64_t)unit_ms * 3000000u);
    uint64_t gamma = burn_gamma((uint64_t)unit_ms * 2000000u);
    for (int i = 0; i < 3; i++)
        pthread_join(workers[i].thread, NULL);
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        uint64_t delta = burn_delta((uint64_t)unit_ms * 2000000u);
        if (write(pipe_fds[1], &delta, sizeof(delta)) != sizeof(delta))
            _exit(1);
        _exit(0);
    }
    uint64_t delta = 0;
    int status = 0;
    if (read(pipe_fds[0], &delta, sizeof(delta)) != sizeof(delta) ||
        waitpid(child, &status, 0) != child || status != 0)
        return 1;
    printf("{\"main\": {\"tid\": %d, \"burn_alpha\": %llu, \"burn_gamma\": %llu}, "
           "\"workers\": [{\"tid\": %ld, \"burn_beta\": %llu}, {\"tid\": %ld, \"burn_beta\": %llu}], "
           "\"sleeper\": %ld, \"child\": {\"pid\": %d, \"burn_delta\": %llu}}\n",
           getpid(), (unsigned long long)alpha, (unsigned long long)gamma, workers[0].tid,
           (unsigned long long)workers[0].ns, workers[1].tid, (unsigned long long)workers[1].ns,
           workers[2].tid, (int)child, (unsigned long long)delta);
    fflush(stdout);
    if (argc > 2 && strcmp(argv[2], "exec") == 0) {
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        burn_alpha(30000000u);
        execl("/nonexistent/prog_native_burn", "prog_native_burn", (char *)NULL);
        sigset_t pending;
        sigpending(&pending);
        printf("{\"sample_signal_pending\": %s}\n",
               sigismember(&pending, SIGRTMIN + 6) ? "true" : "false");
        fflush(stdout);
        char *const bare[] = {"PATH=/usr/bin:/bin", NULL};
        execle("/proc/self/exe", "prog_native_burn", "unblock", (char *)NULL, bare);
        return 1;
    }
    return 0;
}
