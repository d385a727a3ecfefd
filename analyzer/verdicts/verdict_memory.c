/*
 * verdict_memory.c - the memory-growth findings: host (RSS) and device
 * memory that keeps growing once the job runs steadily. Judged over the
 * steady steps, per step (memory_growth.c); a plateau after warm-up is
 * healthy. Without steps, over the last third of the trace.
 */
#include "verdicts/verdict.h"

#include "analysis/gpu/gpu_analysis.h"

#include <stdio.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)
/* growth over the steady steps (or the last third) must pass both: a share of the peak, and an
 * absolute amount (RSS wobbles by tens of MiB in a healthy CPU job) */
#define GROWTH_MIN_FRACTION 0.10
#define DEVICE_GROWTH_MIN_BYTES (16 * MiB)
#define RSS_GROWTH_MIN_BYTES (64 * MiB)

struct growth {
    const char *what; /* "device memory", "host memory (RSS)" */
    double per_step, per_s, peak, min_bytes;
    uint64_t start_step, growing_steps;
};

/* How much it grew while the job ran steadily, 0 when that is noise. */
static double grown(const struct pi_process_info *p, const struct growth *g)
{
    const struct pi_memory_growth *m = &p->growth;
    double total = m->by_steps ? g->per_step * (double)g->growing_steps
                               : g->per_s * (double)(p->end_ns - p->start_ns) / 3 / 1e9;
    if (g->peak <= 0 || total < g->min_bytes || total < GROWTH_MIN_FRACTION * g->peak)
        return 0;
    return total;
}

static int finding(const struct pi_process_info *p, const struct growth *g,
                   struct pi_finding *f)
{
    const struct pi_memory_growth *m = &p->growth;
    double total = grown(p, g);
    if (total <= 0)
        return 0;
    f->kind = "memory-growth";
    f->score = total / g->peak > 1 ? 1 : total / g->peak;
    f->pid = p->header.pid;
    if (m->by_steps)
        snprintf(f->summary, sizeof(f->summary),
                 "%s of pid %d grows by %.2f MiB per step from step %llu on (%llu steps; %llu "
                 "steady steps in all; peak %.0f MiB)",
                 g->what, p->header.pid, g->per_step / MiB, (unsigned long long)g->start_step,
                 (unsigned long long)g->growing_steps, (unsigned long long)m->steady_steps,
                 g->peak / MiB);
    else
        snprintf(f->summary, sizeof(f->summary),
                 "%s of pid %d grows by %.2f MiB/s over the last third of the trace (no steps "
                 "found to judge it by; peak %.0f MiB)",
                 g->what, p->header.pid, g->per_s / MiB, g->peak / MiB);
    pi_finding_evidence(f, m->by_steps ? "growth_mib_per_step" : "growth_mib_per_s",
                        (m->by_steps ? g->per_step : g->per_s) / MiB,
                        m->by_steps ? "MiB/step" : "MiB/s");
    pi_finding_evidence(f, "device_growth_bytes_per_step", m->device_bytes_per_step, "B");
    pi_finding_evidence(f, "rss_growth_bytes_per_step", m->rss_bytes_per_step, "B");
    pi_finding_evidence(f, "growth_start_step", (double)g->start_step, "");
    pi_finding_evidence(f, "steady_steps", (double)m->steady_steps, "");
    pi_finding_evidence(f, "peak_mib", g->peak / MiB, "MiB");
    return 1;
}

int pi_verdict_rss_growth(const struct pi_process_info *p, struct pi_finding *f)
{
    if (p->rss.count < 20 || p->rss_peak == 0)
        return 0;
    struct growth g = {"host memory (RSS)", p->growth.rss_bytes_per_step, p->growth.rss_bytes_per_s,
                       (double)p->rss_peak, RSS_GROWTH_MIN_BYTES, p->growth.rss_start_step,
                       p->growth.rss_growing_steps};
    if (!finding(p, &g, f))
        return 0;
    snprintf(f->advice, sizeof(f->advice),
             "look for tensors or Python objects kept across steps (losses accumulated without "
             ".item(), growing lists, caches), and for leaks in data-loading code");
    return 1;
}

int pi_verdict_device_growth(const struct pi_process_info *p, struct pi_finding *f)
{
    const struct pi_gpu_memory *m = p->gpu;
    if (!m || m->peak == 0)
        return 0;
    struct growth g = {"device memory", p->growth.device_bytes_per_step,
                       p->growth.device_bytes_per_s, (double)m->peak, DEVICE_GROWTH_MIN_BYTES,
                       p->growth.device_start_step, p->growth.device_growing_steps};
    if (!finding(p, &g, f))
        return 0;
    /* a steady per-step leak of device memory: at its rate the device runs out, however
     * large, in a job long enough; that outranks every pace verdict */
    f->ends_job = p->growth.by_steps ? PI_ENDS_JOB_GROWTH : PI_ENDS_JOB_NOT;
    f->sites = p->growth.by_steps ? m->grown : m->leaks;
    f->site_count = p->growth.by_steps ? m->grown_count : m->leak_count;
    if (f->site_count > PI_TOP_SITES)
        f->site_count = PI_TOP_SITES;
    size_t used = strlen(f->summary);
    if (f->site_count && used < sizeof(f->summary))
        snprintf(f->summary + used, sizeof(f->summary) - used, "; kept most at %.150s",
                 pi_site_headline(&f->sites[0]));
    used = strlen(f->summary);
    if (f->ends_job && used < sizeof(f->summary))
        snprintf(f->summary + used, sizeof(f->summary) - used,
                 "; at this rate 1000 more steps take %.1f GiB more", g.per_step * 1000 / (MiB * 1024));
    snprintf(f->advice, sizeof(f->advice),
             "look for tensors kept across steps (accumulated losses, stored outputs, growing "
             "caches); the report lists the call sites of what the steady steps kept");
    return 1;
}
