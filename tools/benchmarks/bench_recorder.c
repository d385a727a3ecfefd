/*
 * bench_recorder - figures of the recorder core, as "name value unit" lines.
 *
 *   hotpath_ns_per_event   added cost of one event with two clock reads,
 *                          median over runs of (profiled - plain) / events
 *   hotpath_record_only_ns the same without the two clock reads' share
 *   clock_read_ns          one pi_clock_ticks() read
 *   trace_bytes_per_event  file bytes per event on a mixed training-like stream
 *   writer_records_per_sec how fast the writer drains full buffers
 *   writer_wake_us         the writer thread's CPU time per wake, at the event
 *                          and new-string rate of a DataLoader worker, with
 *                          the default flush and sample intervals
 *   wake_floor_us          a thread's CPU time for one timed sleep and wake
 *                          with nothing else to do: the machine's share of
 *                          every wake of the writer and the Python sampler
 *   fork_child_profiler_cpu_ms
 *                          what a fork child (a DataLoader worker) costs the
 *                          profiler: its own file, with the parent's strings
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <math.h>
#include <time.h>

#include "core/background_thread.h"
#include "core/recorder.h"

#define RUNS 11
#define EVENTS 200000

static uint64_t now_ns(void)
{
    return pi_clock_ns(CLOCK_MONOTONIC);
}

/* The "intercepted call": cheap, and opaque to the optimizer. */
__attribute__((noinline)) static uint64_t work(uint64_t i)
{
    __asm__ volatile("" ::: "memory");
    return i * 3;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof(double), compare_double);
    return values[n / 2];
}

static double plain_loop(void)
{
    uint64_t sink = 0, start = now_ns();
    for (uint64_t i = 0; i < EVENTS; i++)
        sink += work(i);
    uint64_t elapsed = now_ns() - start;
    __asm__ volatile("" ::"r"(sink));
    return (double)elapsed / EVENTS;
}

static double profiled_loop(void)
{
    uint64_t sink = 0, start = now_ns();
    for (uint64_t i = 0; i < EVENTS; i++) {
        uint64_t t0 = pi_clock_ticks();
        sink += work(i);
        uint64_t t1 = pi_clock_ticks();
        pi_emit(PI_REC_RANGE, 0, t0, t1 - t0, i, 0, 0);
    }
    uint64_t elapsed = now_ns() - start;
    __asm__ volatile("" ::"r"(sink));
    return (double)elapsed / EVENTS;
}

/* The same loop with both clock reads but no record: isolates the record's cost. */
static double clocks_only_loop(void)
{
    uint64_t sink = 0, start = now_ns();
    for (uint64_t i = 0; i < EVENTS; i++) {
        uint64_t t0 = pi_clock_ticks();
        sink += work(i);
        uint64_t t1 = pi_clock_ticks();
        sink += t1 - t0;
    }
    uint64_t elapsed = now_ns() - start;
    __asm__ volatile("" ::"r"(sink));
    return (double)elapsed / EVENTS;
}

static double clock_read(void)
{
    uint64_t sink = 0, start = now_ns();
    for (uint64_t i = 0; i < EVENTS; i++)
        sink += pi_clock_ticks();
    uint64_t elapsed = now_ns() - start;
    __asm__ volatile("" ::"r"(sink));
    return (double)elapsed / EVENTS;
}

static void bench_hotpath(void)
{
    double added[RUNS], clock[RUNS], record[RUNS];
    struct pi_recorder_stats before, after;
    pi_recorder_get_stats(&before);
    for (int r = 0; r < RUNS; r++) {
        double plain = plain_loop();
        double profiled = profiled_loop();
        added[r] = profiled - plain;
        record[r] = profiled - clocks_only_loop();
        clock[r] = clock_read();
        pi_recorder_flush_sync(10000); /* buffers free again for the next run */
    }
    pi_recorder_get_stats(&after);
    printf("hotpath_ns_per_event %.1f ns\n", median(added, RUNS));
    printf("hotpath_record_only_ns %.1f ns\n", median(record, RUNS));
    printf("clock_read_ns %.1f ns\n", median(clock, RUNS));
    printf("hotpath_lost_events %llu events\n",
           (unsigned long long)(after.records_lost - before.records_lost));
}

/* A stream shaped like a training step: data waits, reads, launches, copies, syncs. */
static double lognormal(double median_ticks, double sigma)
{
    double u1 = (rand() + 1.0) / (RAND_MAX + 2.0), u2 = (rand() + 1.0) / (RAND_MAX + 2.0);
    double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
    return median_ticks * exp(sigma * z);
}

#define IO(op, fd_class) PI_IO_FLAGS(op, fd_class, 0)

/* @steps training steps' worth of records, as a DataLoader job makes them;
 * a flush after every @flush_every steps keeps the writer from dropping. */
static uint64_t emit_training_like(uint64_t steps, uint64_t flush_every)
{
    const double tick_per_ns = 2.1;
    uint64_t ts = pi_clock_ticks(), events = 0;
    uint32_t kernels[12], files[64];
    char name[64];
    for (int k = 0; k < 12; k++) {
        snprintf(name, sizeof(name), "void at::native::kernel_%d<float>(float*, int)", k);
        kernels[k] = pi_intern_cstr(name);
    }
    for (int f = 0; f < 64; f++) {
        snprintf(name, sizeof(name), "/data/train/sample_%06d.bin", f);
        files[f] = pi_intern_cstr(name);
    }
#define EMIT(kind, flags, dur, a0, a1, a2)                                                         \
    do {                                                                                           \
        uint64_t d = (uint64_t)(dur);                                                              \
        pi_emit((kind), (flags), ts, d, (a0), (a1), (a2));                                         \
        ts += d + (uint64_t)lognormal(300 * tick_per_ns, 0.5);                                     \
        events++;                                                                                  \
    } while (0)
    for (uint64_t s = 0; s < steps; s++) {
        /* the main thread waits for a batch and reads it from the pipe */
        EMIT(PI_REC_IO, IO(PI_IO_POLL, PI_FD_PIPE), lognormal(2e6 * tick_per_ns, 1.0), 5, 1, 0);
        EMIT(PI_REC_IO, IO(PI_IO_READ, PI_FD_PIPE), lognormal(3e3 * tick_per_ns, 0.5), 5, 4, 0);
        EMIT(PI_REC_IO, IO(PI_IO_READ, PI_FD_PIPE), lognormal(2e3 * tick_per_ns, 0.5), 5, 430, 0);
        for (int f = 0; f < 8; f++) /* a worker's reads */
            EMIT(PI_REC_IO, IO(PI_IO_READ, PI_FD_FILE), lognormal(8e3 * tick_per_ns, 0.7), 7, 8196,
                 files[(s * 8 + f) % 64]);
        for (int k = 0; k < 24; k++) /* launches */
            EMIT(PI_REC_RANGE, 0, lognormal(4e3 * tick_per_ns, 0.4), 0x7f0000001000ull + k * 64,
                 kernels[k % 12], 7);
        EMIT(PI_REC_IO, IO(PI_IO_WRITE, PI_FD_SOCKET), lognormal(50e3 * tick_per_ns, 0.5), 9,
             1 << 20, 0);
        for (int m = 0; m < 4; m++) /* lock waits */
            EMIT(PI_REC_WAIT, 0, lognormal(40e3 * tick_per_ns, 1.0), PI_WAIT_COND,
                 0x55550000 + m * 64, 0);
        if (flush_every && s % flush_every == flush_every - 1)
            pi_recorder_flush_sync(60000);
    }
    return events;
}

static uint64_t directory_bytes(const char *dir)
{
    uint64_t total = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0)
            total += (uint64_t)st.st_size;
    }
    if (d)
        closedir(d);
    return total;
}

static int start_recorder(const char *dir, int defaults)
{
    struct pi_config config;
    pi_config_from_env(&config);
    snprintf(config.output_dir, sizeof(config.output_dir), "%s", dir);
    if (!defaults) {
        config.buffer_count = 1024; /* 64 MiB: the runs below never wait for the writer */
        config.sample_interval_ns = 0;
    }
    return pi_recorder_start(&config);
}

static void bench_stream(const char *dir)
{
    srand(42);
    uint64_t events = emit_training_like(20000, 0);
    pi_recorder_stop(PI_END_EXIT, 0);
    struct pi_recorder_stats stats;
    pi_recorder_get_stats(&stats);
    printf("trace_bytes_per_event %.2f bytes\n", (double)directory_bytes(dir) / (double)events);
    printf("trace_stream_lost_events %llu events\n", (unsigned long long)stats.records_lost);
}

static void bench_writer(void)
{
    const uint64_t events = 1000000;
    uint64_t ts = pi_clock_ticks();
    for (uint64_t i = 0; i < events; i++)
        pi_emit(PI_REC_RANGE, 0, ts + i * 1000 + (uint64_t)(rand() % 300), 2000 + rand() % 500,
                (uint64_t)(rand() % 64), 0, 0);
    struct pi_recorder_stats before, after;
    pi_recorder_get_stats(&before);
    uint64_t start = now_ns();
    pi_recorder_flush_sync(60000);
    uint64_t elapsed = now_ns() - start;
    pi_recorder_get_stats(&after);
    printf("writer_records_per_sec %.0f records/s\n",
           (double)(after.records_written - before.records_written) * 1e9 / (double)elapsed);
}

/*
 * The stream of the DataLoader example's main process (examples/
 * pytorch_train.py, 2 workers), measured from its trace: about 134 KB of
 * records a second before compression, 1,200 events and 330 new strings
 * (paths, stacks, Python frames) a second. Here: every 20 ms one training
 * step's 42 events and 6 new 100-character strings, about 140 KB/s, with
 * the default flush and sample intervals. Three one-second segments; the
 * medians of the writer's CPU per wake and per second.
 */
static void bench_wake(void)
{
    double per_wake[3], per_second[3], wakes_per_second[3];
    uint64_t path = 0;
    char name[128];
    for (int segment = 0; segment < 3; segment++) {
        struct pi_recorder_stats before, after;
        pi_recorder_get_stats(&before);
        uint64_t cpu_before = pi_background_cpu_ns(), wall_before = now_ns();
        for (int tick = 0; tick < 50; tick++) {
            emit_training_like(1, 0);
            for (int f = 0; f < 6; f++) {
                snprintf(name, sizeof(name),
                         "/datasets/imagenet/train/n%08llu/class_%02d/image_%08llu_%08llu.JPEG",
                         (unsigned long long)(path * 7919), (int)(path % 37),
                         (unsigned long long)path, (unsigned long long)(path * 31));
                pi_emit(PI_REC_IO, IO(PI_IO_READ, PI_FD_FILE), pi_clock_ticks(), 20000, 7, 4096,
                        pi_intern_cstr(name));
                path++;
            }
            struct timespec pause = {0, 20000000};
            nanosleep(&pause, NULL);
        }
        pi_recorder_get_stats(&after);
        uint64_t wakes = after.writer_wakes - before.writer_wakes;
        double cpu_us = (double)(pi_background_cpu_ns() - cpu_before) / 1e3;
        double seconds = (double)(now_ns() - wall_before) / 1e9;
        per_wake[segment] = cpu_us / (double)(wakes ? wakes : 1);
        per_second[segment] = cpu_us / seconds;
        wakes_per_second[segment] = (double)wakes / seconds;
    }
    printf("writer_wake_us %.1f us (goal <= 50)\n", median(per_wake, 3));
    printf("writer_cpu_us_per_s %.0f us/s (%.0f wakes/s)\n", median(per_second, 3),
           median(wakes_per_second, 3));
}

/* Ten sleeps of the writer's interval (100 ms), nothing done in between. */
static void bench_wake_floor(void)
{
    uint64_t before = pi_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < 10; i++) {
        struct timespec pause = {0, 100000000};
        nanosleep(&pause, NULL);
    }
    printf("wake_floor_us %.1f us (one timed sleep and wake of an idle thread: the machine's "
           "part of each wake)\n",
           (double)(pi_clock_ns(CLOCK_THREAD_CPUTIME_ID) - before) / 10e3);
}

/*
 * A DataLoader worker's start: the parent holds the strings of the example
 * job's main process (about 3,000: paths, Python names, stacks; 700 KB),
 * and each of five fork children writes its own file: the parent's file's
 * name for them (never the strings again), a few events and its end. The
 * child's CPU time from the fork to its file's end and the file's bytes,
 * medians of the five.
 */
#define FORK_STRINGS 3000
#define FORK_CHILDREN 5

static void bench_fork(void)
{
    char text[256];
    size_t bytes = 0;
    for (int i = 0; i < FORK_STRINGS; i++) {
        int n = snprintf(text, sizeof(text),
                         "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/"
                         "module_%03d/file_%04d.py:%d in function_%d_with_a_name_%08x_as_long_as "
                         "Python's qualified names of methods in nested classes get",
                         i % 97, i, i * 7 % 1000, i, (unsigned)(i * 2654435761u));
        pi_intern_cstr(text);
        bytes += (size_t)n;
    }
    pi_recorder_flush_sync(60000);
    double used_ms[FORK_CHILDREN], file_bytes[FORK_CHILDREN];
    for (int c = 0; c < FORK_CHILDREN; c++) {
        int fds[2];
        if (pipe(fds) != 0)
            return;
        pid_t pid = fork();
        if (pid == 0) {
            uint64_t before = pi_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            pi_recorder_after_fork_child();
            emit_training_like(10, 0);
            pi_recorder_stop(PI_END_EXIT, 0);
            struct pi_recorder_stats stats;
            pi_recorder_get_stats(&stats);
            uint64_t figures[2] = {pi_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - before,
                                   stats.bytes_written};
            _exit(write(fds[1], figures, sizeof(figures)) == (ssize_t)sizeof(figures) ? 0 : 1);
        }
        uint64_t figures[2] = {0, 0};
        close(fds[1]);
        if (pid < 0 || read(fds[0], figures, sizeof(figures)) != (ssize_t)sizeof(figures))
            figures[0] = figures[1] = 0;
        close(fds[0]);
        waitpid(pid, NULL, 0);
        used_ms[c] = (double)figures[0] / 1e6;
        file_bytes[c] = (double)figures[1];
    }
    printf("fork_child_profiler_cpu_ms %.2f ms (%d inherited strings, %zu KB)\n",
           median(used_ms, FORK_CHILDREN), FORK_STRINGS, bytes >> 10);
    printf("fork_child_bytes %.0f B (its file; the inherited strings stay in the parent's)\n",
           median(file_bytes, FORK_CHILDREN));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "hotpath";
    if (strcmp(mode, "generate") == 0) {
        /* generate DIR STEPS: a trace of STEPS training steps for the analyzer benchmarks */
        if (argc != 4 || start_recorder(argv[2], 0) != 0)
            return 2;
        uint64_t events = emit_training_like(strtoull(argv[3], NULL, 10), 2000);
        pi_recorder_stop(PI_END_EXIT, 0);
        struct pi_recorder_stats stats;
        pi_recorder_get_stats(&stats);
        printf("%llu %llu\n", (unsigned long long)events, (unsigned long long)stats.records_lost);
        return stats.records_lost ? 1 : 0;
    }
    char dir[] = "/tmp/profinject-bench-XXXXXX";
    int defaults = strcmp(mode, "wake") == 0 || strcmp(mode, "fork") == 0;
    if (!mkdtemp(dir) || start_recorder(dir, defaults) != 0)
        return 1;
    if (strcmp(mode, "hotpath") == 0)
        bench_hotpath();
    else if (strcmp(mode, "stream") == 0)
        bench_stream(dir);
    else if (strcmp(mode, "writer") == 0)
        bench_writer();
    else if (strcmp(mode, "wake") == 0) {
        bench_wake();
        bench_wake_floor();
    } else if (strcmp(mode, "fork") == 0)
        bench_fork();
    else
        return 2;
    pi_recorder_stop(PI_END_EXIT, 0);
    char command[128];
    snprintf(command, sizeof(command), "rm -rf %s", dir);
    return system(command) == 0 ? 0 : 1;
}
