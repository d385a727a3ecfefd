/*
 * verdict.c - rank what held the training back. Each rule measures the
 * share of the training loop's time one cause explains; shares above a
 * threshold become findings, largest first.
 */
#include "verdict.h"

#include "gpu_analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INPUT_BOUND_SHARE 0.25
#define WAIT_BOUND_SHARE 0.20

const struct pi_thread_info *pi_main_thread(const struct pi_process_info *p)
{
    for (size_t i = 0; i < p->thread_count; i++)
        if ((int)p->threads[i].tid == p->header.pid)
            return &p->threads[i];
    return NULL;
}

uint64_t pi_thread_wall_ns(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    if ((int)t->tid == p->header.pid)
        return p->end_ns - p->start_ns;
    return t->last_ns > t->first_ns ? t->last_ns - t->first_ns : 0;
}

uint64_t pi_thread_cpu_ns(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    uint64_t wall = pi_thread_wall_ns(p, t), waited = 0;
    for (int c = 0; c < PI_TIME_CPU; c++)
        waited += t->time[c];
    return wall > waited ? wall - waited : 0;
}

const struct pi_process_info *pi_training_process(const struct pi_analysis *a)
{
    const struct pi_process_info *best = NULL;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (!best || p->steps.count > best->steps.count ||
            (p->steps.count == best->steps.count && p->children > best->children) ||
            (p->steps.count == best->steps.count && p->children == best->children &&
             p->end_ns - p->start_ns > best->end_ns - best->start_ns))
            best = p;
    }
    return best;
}

static double file_read_p50_ms(const struct pi_analysis *a)
{
    struct pi_latency_entry *e =
        pi_latency_get((struct pi_latency_table *)&a->calls, "io", "read", "file");
    return e && e->durations.count ? pi_histogram_quantile(&e->durations, 0.5) / 1e6 : 0.0;
}

/* Time the main thread waited for the data loader, over its step time. */
static int input_bound(const struct pi_analysis *a, const struct pi_process_info *p,
                       struct pi_finding *f)
{
    const struct pi_thread_info *main = pi_main_thread(p);
    double waited, total;
    if (p->steps.count > p->steps.warmup + 1) {
        waited = (double)p->steps.steady_wait_ns;
        total = (double)p->steps.steady_total_ns;
    } else if (main) {
        waited = (double)main->time[PI_TIME_DATA_WAIT];
        total = (double)pi_thread_wall_ns(p, main);
    } else {
        return 0;
    }
    if (total <= 0 || waited / total < INPUT_BOUND_SHARE)
        return 0;
    f->kind = "input-bound";
    f->score = waited / total;
    f->pid = p->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "the training loop (pid %d) waited for its data-loader workers %.0f%% of its step "
             "time (%.2f s of %.2f s)",
             p->header.pid, 100 * f->score, waited / 1e9, total / 1e9);
    snprintf(f->advice, sizeof(f->advice),
             "more DataLoader workers (num_workers; %llu worker processes were started), "
             "persistent_workers=True, pin_memory=True, cheaper per-sample loading and decoding, "
             "or faster storage / a cache for the dataset",
             (unsigned long long)p->children);
    pi_finding_evidence(f, "data_wait_s", waited / 1e9, "s");
    pi_finding_evidence(f, "step_time_s", total / 1e9, "s");
    pi_finding_evidence(f, "steps", (double)p->steps.count, "");
    pi_finding_evidence(f, "worker_processes", (double)p->children, "");
    pi_finding_evidence(f, "file_read_p50_ms", file_read_p50_ms(a), "ms");
    return 1;
}

/* A share of the main thread's wall time spent in one kind of wait. */
static int wait_bound(const struct pi_process_info *p, struct pi_finding *f, int time_class,
                      const char *kind, const char *what, const char *advice)
{
    const struct pi_thread_info *main = pi_main_thread(p);
    if (!main)
        return 0;
    double wall = (double)pi_thread_wall_ns(p, main), waited = (double)main->time[time_class];
    if (wall <= 0 || waited / wall < WAIT_BOUND_SHARE)
        return 0;
    f->kind = kind;
    f->score = waited / wall;
    f->pid = p->header.pid;
    snprintf(f->summary, sizeof(f->summary), "the main thread of pid %d spent %.0f%% of its time %s",
             p->header.pid, 100 * f->score, what);
    snprintf(f->advice, sizeof(f->advice), "%s", advice);
    pi_finding_evidence(f, "waited_s", waited / 1e9, "s");
    pi_finding_evidence(f, "wall_s", wall / 1e9, "s");
    return 1;
}

/* Many kernels so short that launching them costs as much as running them. */
static int launch_bound(const struct pi_analysis *a, const struct pi_process_info *p,
                        struct pi_finding *f)
{
    size_t n;
    struct pi_latency_entry **kernels = pi_latency_sorted(&a->calls, "kernel", &n);
    uint64_t launches = 0, short_launches = 0, launch_ns = 0;
    for (size_t i = 0; kernels && i < n; i++) {
        struct pi_latency_entry *g =
            pi_latency_get((struct pi_latency_table *)&a->calls, "gpu", kernels[i]->name, "kernel");
        double gpu_p50 = g && g->durations.count ? pi_histogram_quantile(&g->durations, 0.5) : 1e18;
        double host_p50 = pi_histogram_quantile(&kernels[i]->durations, 0.5);
        launches += kernels[i]->durations.count;
        launch_ns += kernels[i]->durations.sum;
        if (gpu_p50 < 2 * host_p50 || gpu_p50 < 10000)
            short_launches += kernels[i]->durations.count;
    }
    free(kernels);
    const struct pi_thread_info *main = pi_main_thread(p);
    double wall = main ? (double)pi_thread_wall_ns(p, main) : 0;
    if (launches < 1000 || short_launches * 2 < launches || wall <= 0)
        return 0;
    f->kind = "launch-bound";
    f->score = (double)launch_ns / wall > 0.05 ? (double)launch_ns / wall : 0.05;
    f->pid = p->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "%llu of %llu kernel launches run about as long on the GPU as launching them takes "
             "on the CPU",
             (unsigned long long)short_launches, (unsigned long long)launches);
    snprintf(f->advice, sizeof(f->advice),
             "fewer, larger kernels: CUDA graphs (torch.cuda.graphs, mode=\"reduce-overhead\"), "
             "torch.compile to fuse operations, larger batches");
    pi_finding_evidence(f, "launches", (double)launches, "");
    pi_finding_evidence(f, "short_launches", (double)short_launches, "");
    pi_finding_evidence(f, "launch_time_s", (double)launch_ns / 1e9, "s");
    return 1;
}

/* Copies from pageable host memory, or copies the host waits for. */
static int copy_bound(const struct pi_analysis *a, const struct pi_process_info *p,
                      struct pi_finding *f)
{
    size_t n;
    struct pi_latency_entry **copies = pi_latency_sorted(&a->calls, "copy", &n);
    uint64_t copy_ns = 0, pageable_bytes = 0, host_bytes = 0;
    for (size_t i = 0; copies && i < n; i++) {
        copy_ns += copies[i]->durations.sum;
        int host = strcmp(copies[i]->name, "HtoD") == 0 || strcmp(copies[i]->name, "DtoH") == 0;
        if (host)
            host_bytes += copies[i]->bytes;
        if (host && strncmp(copies[i]->detail, "pageable", 8) == 0)
            pageable_bytes += copies[i]->bytes;
    }
    free(copies);
    const struct pi_thread_info *main = pi_main_thread(p);
    double wall = main ? (double)pi_thread_wall_ns(p, main) : 0;
    if (wall <= 0 || (double)copy_ns / wall < WAIT_BOUND_SHARE)
        return 0;
    f->kind = "copy-bound";
    f->score = (double)copy_ns / wall;
    f->pid = p->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "the main thread of pid %d spent %.0f%% of its time in memory copies; %.0f%% of the "
             "host-device bytes came from pageable memory",
             p->header.pid, 100 * f->score,
             host_bytes ? 100.0 * (double)pageable_bytes / (double)host_bytes : 0.0);
    snprintf(f->advice, sizeof(f->advice),
             "pin_memory=True in the DataLoader, .to(device, non_blocking=True), keep tensors on "
             "the GPU between steps instead of copying them back");
    pi_finding_evidence(f, "copy_time_s", (double)copy_ns / 1e9, "s");
    pi_finding_evidence(f, "pageable_bytes", (double)pageable_bytes, "B");
    pi_finding_evidence(f, "host_device_bytes", (double)host_bytes, "B");
    return 1;
}

static int by_score(const void *x, const void *y)
{
    const struct pi_finding *a = x, *b = y;
    return a->score > b->score ? -1 : a->score < b->score;
}

int pi_verdict(const struct pi_analysis *a, struct pi_finding *out)
{
    int n = 0;
    memset(out, 0, sizeof(*out) * PI_MAX_FINDINGS);
    const struct pi_process_info *p = pi_training_process(a);
    if (p) {
        n += input_bound(a, p, &out[n]);
        n += wait_bound(p, &out[n], PI_TIME_LOCK_WAIT, "lock-bound",
                        "waiting for locks and the GIL",
                        "fewer Python threads competing with the training loop, work moved to "
                        "processes, shorter critical sections");
        n += wait_bound(p, &out[n], PI_TIME_FILE_IO, "file-io-bound", "in file I/O",
                        "load data in DataLoader worker processes (num_workers > 0) so that file "
                        "reads overlap with training; faster storage or a cache");
        n += wait_bound(p, &out[n], PI_TIME_SYNC, "sync-bound",
                        "blocked until the GPU caught up (synchronisation, synchronous copies)",
                        "look for .item(), .cpu(), .numpy(), print(tensor) and synchronous copies "
                        "in the loop; if the GPU is busy all that time, the job is GPU-bound: "
                        "speed up the kernels");
        n += launch_bound(a, p, &out[n]);
        n += copy_bound(a, p, &out[n]);
    }
    for (size_t i = 0; i < a->process_count && n + 1 < PI_MAX_FINDINGS; i++) {
        n += pi_verdict_rss_growth(&a->processes[i], &out[n]);
        n += pi_verdict_device_growth(&a->processes[i], &out[n]);
    }
    qsort(out, (size_t)n, sizeof(*out), by_score);
    if (n == 0) {
        struct pi_finding *f = &out[n++];
        f->kind = "none";
        const struct pi_thread_info *main = p ? pi_main_thread(p) : NULL;
        double wall = main ? (double)pi_thread_wall_ns(p, main) : 0;
        double cpu = main ? (double)pi_thread_cpu_ns(p, main) : 0;
        f->score = wall > 0 ? cpu / wall : 0;
        f->pid = p ? p->header.pid : 0;
        snprintf(f->summary, sizeof(f->summary),
                 "no bottleneck stands out: the main thread of pid %d computed %.0f%% of its time "
                 "and waited for data %.0f%%",
                 f->pid, 100 * f->score,
                 wall > 0 && main ? 100 * main->time[PI_TIME_DATA_WAIT] / wall : 0.0);
        snprintf(f->advice, sizeof(f->advice),
                 "speed up the model itself: larger batches, mixed precision, torch.compile");
        pi_finding_evidence(f, "cpu_share", f->score, "");
    }
    return n;
}
