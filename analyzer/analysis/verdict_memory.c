/*
 * verdict_memory.c - the memory-growth findings: host (RSS) and device
 * memory that keeps growing while the job runs.
 */
#include "verdict.h"

#include "gpu_analysis.h"

#include <stdio.h>

#define GROWTH_MIN_BYTES_PER_S (1024.0 * 1024.0)
#define GROWTH_MIN_FRACTION 0.10

int pi_verdict_rss_growth(const struct pi_process_info *p, struct pi_finding *f)
{
    if (p->rss.count < 20 || p->rss_peak == 0)
        return 0;
    uint64_t middle = p->start_ns + (p->end_ns - p->start_ns) / 2;
    double slope = pi_series_slope(&p->rss, middle);
    double seconds = (double)(p->end_ns - middle) / 1e9;
    double grown = slope * seconds;
    if (slope < GROWTH_MIN_BYTES_PER_S || grown < GROWTH_MIN_FRACTION * (double)p->rss_peak)
        return 0;
    f->kind = "memory-growth";
    f->score = grown / (double)p->rss_peak;
    if (f->score > 1)
        f->score = 1;
    f->pid = p->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "host memory (RSS) of pid %d still grows by %.1f MB/s in the second half of the run "
             "(peak %.0f MB)",
             p->header.pid, slope / 1e6, (double)p->rss_peak / 1e6);
    snprintf(f->advice, sizeof(f->advice),
             "look for tensors or Python objects kept across steps (losses accumulated without "
             ".item(), growing lists, caches), and for leaks in data-loading code");
    pi_finding_evidence(f, "growth_mb_per_s", slope / 1e6, "MB/s");
    pi_finding_evidence(f, "rss_peak_mb", (double)p->rss_peak / 1e6, "MB");
    return 1;
}

int pi_verdict_device_growth(const struct pi_process_info *p, struct pi_finding *f)
{
    const struct pi_gpu_memory *m = p->gpu;
    if (!m || m->series.count < 20 || m->peak == 0)
        return 0;
    uint64_t middle = p->start_ns + (p->end_ns - p->start_ns) / 2;
    double slope = pi_series_slope(&m->series, middle);
    double grown = slope * (double)(p->end_ns - middle) / 1e9;
    if (slope < GROWTH_MIN_BYTES_PER_S || grown < GROWTH_MIN_FRACTION * (double)m->peak)
        return 0;
    f->kind = "memory-growth";
    f->score = grown / (double)m->peak > 1 ? 1 : grown / (double)m->peak;
    f->pid = p->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "device memory of pid %d still grows by %.1f MB/s in the second half of the run "
             "(peak %.0f MB)%s%.120s",
             p->header.pid, slope / 1e6, (double)m->peak / 1e6,
             m->leak_count ? "; largest never-freed call site: " : "",
             m->leak_count ? pi_site_headline(&m->leaks[0]) : "");
    snprintf(f->advice, sizeof(f->advice),
             "look for tensors kept across steps (accumulated losses, stored outputs, growing "
             "caches); the report lists the call sites of what was never freed");
    pi_finding_evidence(f, "growth_mb_per_s", slope / 1e6, "MB/s");
    pi_finding_evidence(f, "device_peak_mb", (double)m->peak / 1e6, "MB");
    return 1;
}
