/*
 * bench_start RUNS LIBRARY PROGRAM [ARGS...] - what a process start costs
 * with and without the preload: PROGRAM run RUNS times each way, the runs
 * alternating, each timed from posix_spawn to the end of wait4. Prints
 * "plain_ms preload_ms plain_cpu_ms preload_cpu_ms" (medians; CPU time is
 * the child's user + system time from wait4's rusage, the profiler's
 * threads included). The environment is passed on; PROFINJECT_OUTPUT
 * should point at a scratch directory.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), compare);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One run; wall and CPU milliseconds, or -1 when it did not start or failed. */
static int run_once(char **argv, char **env, double *wall, double *cpu)
{
    double start = now_ms();
    pid_t pid;
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, env) != 0)
        return -1;
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    *wall = now_ms() - start;
    *cpu = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
           (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_start RUNS LIBRARY PROGRAM [ARGS...]\n");
        return 64;
    }
    int runs = atoi(argv[1]);
    if (runs < 1)
        runs = 1;
    /* the same environment twice: without LD_PRELOAD, and with it */
    int n = 0;
    while (environ[n])
        n++;
    char **plain = calloc((size_t)n + 1, sizeof(char *));
    char **preload = calloc((size_t)n + 2, sizeof(char *));
    int p = 0, q = 0;
    for (int i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            plain[p++] = preload[q++] = environ[i];
    char setting[4200];
    snprintf(setting, sizeof(setting), "LD_PRELOAD=%s", argv[2]);
    preload[q++] = setting;
    double *wall[2], *cpu[2];
    for (int k = 0; k < 2; k++) {
        wall[k] = calloc((size_t)runs, sizeof(double));
        cpu[k] = calloc((size_t)runs, sizeof(double));
    }
    for (int i = 0; i < runs; i++)
        for (int j = 0; j < 2; j++) {
            int k = (i + j) % 2; /* alternate which goes first */
            if (run_once(argv + 3, k ? preload : plain, &wall[k][i], &cpu[k][i]) != 0) {
                fprintf(stderr, "bench_start: %s failed\n", argv[3]);
                return 1;
            }
        }
    printf("%.3f %.3f %.3f %.3f\n", median(wall[0], runs), median(wall[1], runs),
           median(cpu[0], runs), median(cpu[1], runs));
    return 0;
}
