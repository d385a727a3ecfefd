/*
 * verdict_gpu.c - the findings of a GPU job, from the loop's time split:
 *
 *   gpu-bound     the GPU is busy most of the loop: only faster kernels help;
 *   sync-bound    the host blocks in synchronisations (.item(), synchronous
 *                 copies) while the GPU is not saturated: host and GPU take
 *                 turns instead of overlapping;
 *   launch-bound  the GPU idles while the host is busy issuing work (Python,
 *                 operator dispatch, kernel launches) and does not wait for
 *                 the GPU;
 *   copy-bound    the main thread spends its time in memory copies.
 *
 * The GPU's idle time is shared out first to waiting for data and to
 * synchronisation (their own findings), and only the rest is put down to
 * the host issuing work.
 */
#include "verdicts/verdict.h"
#include "profinject/verdict_thresholds.h"

#include "analysis/gpu/gpu_timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COPY_BOUND_SHARE 0.20
#define MIN_LAUNCHES 1000

static double share(double part, double whole)
{
    return whole > 0 ? part / whole : 0;
}

/* The kernel with the most GPU time, and that time. */
static const struct pi_latency_entry *top_kernel(const struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **gpu = pi_latency_sorted(&a->calls, "gpu", &n);
    const struct pi_latency_entry *top = NULL;
    for (size_t i = 0; gpu && i < n && !top; i++)
        if (strcmp(gpu[i]->detail, "kernel") == 0)
            top = gpu[i];
    free(gpu);
    return top;
}

int pi_verdict_gpu_bound(const struct pi_analysis *a, const struct pi_loop *l, struct pi_finding *f)
{
    double busy = share(l->gpu_ns, l->total_ns);
    if (l->gpu_ns < 0 || busy < PI_GPU_BOUND_SHARE)
        return 0;
    const struct pi_latency_entry *top = top_kernel(a);
    f->kind = "gpu-bound";
    f->score = busy > 1 ? 1 : busy;
    f->pid = l->process->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "the GPU was busy %.0f%% of %s (pid %d, %.2f s of %.2f s, %s)%s%.150s",
             100 * busy, l->name, f->pid, l->gpu_ns / 1e9, l->total_ns / 1e9, l->basis,
             top ? "; most GPU time: " : "", top ? top->name : "");
    snprintf(f->advice, sizeof(f->advice),
             "make the kernels cheaper: mixed precision (torch.autocast with bf16), TF32 matmuls, "
             "fused attention (scaled_dot_product_attention), torch.compile; the kernels table "
             "says which ones take the time");
    pi_finding_evidence(f, "gpu_busy_s", l->gpu_ns / 1e9, "s");
    pi_finding_evidence(f, "loop_s", l->total_ns / 1e9, "s");
    pi_finding_evidence(f, "gpu_busy_share", busy, "");
    pi_finding_evidence(f, "steps", l->steps, "");
    if (top)
        pi_finding_evidence(f, "top_kernel_gpu_s", (double)top->durations.sum / 1e9, "s");
    return 1;
}

int pi_verdict_sync_bound(const struct pi_loop *l, struct pi_finding *f)
{
    double blocked = share(l->sync_ns, l->total_ns), busy = share(l->gpu_ns, l->total_ns);
    /* a host that waits for a saturated GPU is GPU-bound, not sync-bound */
    if (blocked < PI_SYNC_BOUND_SHARE || (l->gpu_ns >= 0 && busy >= PI_GPU_BOUND_SHARE))
        return 0;
    f->kind = "sync-bound";
    f->score = blocked;
    f->pid = l->process->header.pid;
    if (l->gpu_ns >= 0)
        snprintf(f->summary, sizeof(f->summary),
                 "%s (pid %d) was blocked in CUDA synchronisation %.0f%% of its time "
                 "while the GPU was busy only %.0f%%: host and GPU take turns instead of "
                 "overlapping",
                 l->name, f->pid, 100 * blocked, 100 * busy);
    else
        snprintf(f->summary, sizeof(f->summary),
                 "%s (pid %d) was blocked in CUDA synchronisation %.0f%% of its time "
                 "(no GPU durations were recorded: if the GPU was busy all that time, the job is "
                 "GPU-bound instead)",
                 l->name, f->pid, 100 * blocked);
    snprintf(f->advice, sizeof(f->advice),
             "take .item(), .cpu(), .numpy(), print(tensor) and synchronous copies out of the step "
             "(log every N steps, keep metrics on the GPU), copy with non_blocking=True from "
             "pinned memory");
    pi_finding_evidence(f, "sync_s", l->sync_ns / 1e9, "s");
    pi_finding_evidence(f, "loop_s", l->total_ns / 1e9, "s");
    pi_finding_evidence(f, "sync_share", blocked, "");
    pi_finding_evidence(f, "gpu_busy_share", l->gpu_ns >= 0 ? busy : -1, "");
    return 1;
}

/* Launches of kernels that run on the GPU about as long as launching them takes. */
static double short_launches(const struct pi_analysis *a, double *mean_gpu_us)
{
    size_t n;
    struct pi_latency_entry **kernels = pi_latency_sorted(&a->calls, "kernel", &n);
    double count = 0, gpu_ns = 0, gpu_count = 0;
    for (size_t i = 0; kernels && i < n; i++) {
        struct pi_latency_entry *g =
            pi_latency_get((struct pi_latency_table *)&a->calls, "gpu", kernels[i]->name, "kernel");
        if (!g || !g->durations.count)
            continue;
        double gpu_p50 = pi_histogram_quantile(&g->durations, 0.5);
        double host_p50 = pi_histogram_quantile(&kernels[i]->durations, 0.5);
        gpu_ns += (double)g->durations.sum;
        gpu_count += (double)g->durations.count;
        if (gpu_p50 < 2 * host_p50 || gpu_p50 < 10000)
            count += (double)kernels[i]->durations.count;
    }
    free(kernels);
    *mean_gpu_us = gpu_count > 0 ? gpu_ns / gpu_count / 1e3 : 0;
    return count;
}

int pi_verdict_launch_bound(const struct pi_analysis *a, const struct pi_loop *l,
                            struct pi_finding *f)
{
    if (l->launches < MIN_LAUNCHES || l->total_ns <= 0)
        return 0;
    double data = share(l->data_wait_ns, l->total_ns), sync = share(l->sync_ns, l->total_ns);
    double per_step = l->steps > 0 ? l->launches / (l->steps + l->process->steps.warmup) : 0;
    /* With a synchronisation in every step, a GPU slower than the host would
     * make the host wait there: a host that hardly waits sets the pace,
     * whatever share of the loop the GPU is busy. Without steps or without
     * synchronisations this cannot be said. */
    int host_paced = l->steps > 0 && l->sync_ns > 0 && sync < PI_HOST_WAITS_LITTLE;
    double idle;
    if (l->gpu_ns >= 0) {
        double busy = share(l->gpu_ns, l->total_ns);
        idle = 1 - busy - data - sync;
        if (idle < PI_LAUNCH_BOUND_IDLE) {
            /* little idle time left unexplained: still the host's pace
             * when the GPU is not saturated and the host does not wait */
            if (!host_paced || busy >= PI_GPU_BOUND_SHARE)
                return 0;
            idle = 1 - busy - sync;
        }
    } else {
        if (!host_paced)
            return 0;
        idle = 1 - data - sync;
        if (idle < 0.5)
            return 0;
    }
    double mean_gpu_us, shorts = short_launches(a, &mean_gpu_us);
    f->kind = "launch-bound";
    f->score = idle;
    f->pid = l->process->header.pid;
    if (l->gpu_ns >= 0)
        snprintf(f->summary, sizeof(f->summary),
                 "the GPU idled %.0f%% of %s (pid %d: busy %.2f s of %.2f s, %s) "
                 "while the host issued work (%.0f kernel launches, mean %.0f us on the GPU) and "
                 "waited for the GPU only %.1f%% of the time%s",
                 100 * idle, l->name, f->pid, l->gpu_ns / 1e9, l->total_ns / 1e9, l->basis,
                 l->launches, mean_gpu_us, 100 * sync,
                 host_paced ? " although every step synchronises: the host sets the pace" : "");
    else
        snprintf(f->summary, sizeof(f->summary),
                 "the host limits %s (pid %d): it waited for the GPU only %.1f%% "
                 "of its step time although every step synchronises, and issued %.0f kernels per "
                 "step (no GPU durations were recorded, so the GPU's idle share is not known)",
                 l->name, f->pid, 100 * sync, per_step);
    snprintf(f->advice, sizeof(f->advice),
             "give the GPU more work per launch: larger batches, torch.compile (fuses "
             "operations), CUDA graphs (mode=\"reduce-overhead\"), fused optimizers "
             "(AdamW(fused=True)); move Python work out of the step");
    /* without GPU durations the score is the host's share of the loop, not the GPU's idle share */
    pi_finding_evidence(f, "gpu_idle_share", l->gpu_ns >= 0 ? idle : -1, "");
    pi_finding_evidence(f, "host_wait_for_gpu_share", sync, "");
    pi_finding_evidence(f, "loop_s", l->total_ns / 1e9, "s");
    pi_finding_evidence(f, "gpu_busy_s", l->gpu_ns >= 0 ? l->gpu_ns / 1e9 : -1, "s");
    pi_finding_evidence(f, "launches", l->launches, "");
    pi_finding_evidence(f, "launches_per_step", per_step, "");
    pi_finding_evidence(f, "short_launches", shorts, "");
    return 1;
}

/* Copies from pageable host memory, or copies the host waits for. */
int pi_verdict_copy_bound(const struct pi_analysis *a, const struct pi_loop *l,
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
    double wall = l->main_wall_ns;
    if (wall <= 0 || (double)copy_ns / wall < COPY_BOUND_SHARE)
        return 0;
    f->kind = "copy-bound";
    f->score = (double)copy_ns / wall;
    f->pid = l->process->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "the main thread of pid %d spent %.0f%% of its time in memory copies; %.0f%% of the "
             "host-device bytes came from pageable memory",
             f->pid, 100 * f->score, 100 * share((double)pageable_bytes, (double)host_bytes));
    snprintf(f->advice, sizeof(f->advice),
             "pin_memory=True in the DataLoader, .to(device, non_blocking=True), keep tensors on "
             "the GPU between steps instead of copying them back");
    pi_finding_evidence(f, "copy_time_s", (double)copy_ns / 1e9, "s");
    pi_finding_evidence(f, "pageable_bytes", (double)pageable_bytes, "B");
    pi_finding_evidence(f, "host_device_bytes", (double)host_bytes, "B");
    return 1;
}
