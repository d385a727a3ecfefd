/* key_figures.c - see key_figures.h. */
#include "key_figures.h"

#include <string.h>

#include "analysis/gpu/gpu_analysis.h"
#include "section_host_memory.h"
#include "verdicts/verdict.h"

void pi_key_figures_of(const struct pi_analysis *a, struct pi_key_figures *k)
{
    memset(k, 0, sizeof(*k));
    k->gpu_busy_share = -1;
    k->lost = a->lost;
    k->strings_lost = a->strings_lost;
    struct pi_host_peak host = pi_host_peak_of(a);
    k->host_peak = host.bytes;
    k->host_figure = host.figure;
    k->host_processes = host.alive;
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].gpu && a->processes[i].gpu->peak > k->device_peak)
            k->device_peak = a->processes[i].gpu->peak;
    const struct pi_process_info *p = pi_training_process(a);
    if (!p)
        return;
    k->pid = p->header.pid;
    const struct pi_steps *s = &p->steps;
    k->steady_steps = s->count - s->warmup;
    /* an exact histogram sorts its samples when asked: not const */
    struct pi_histogram *h = (struct pi_histogram *)&s->steady_ns;
    if (k->steady_steps && s->steady_total_ns) {
        k->steps_per_s = (double)k->steady_steps * 1e9 / (double)s->steady_total_ns;
        k->step_p50_ns = h->count ? pi_histogram_quantile(h, 0.5) : 0;
        k->step_p95_ns = h->count ? pi_histogram_quantile(h, 0.95) : 0;
    }
    k->gpu_busy_ns = p->gpu_busy_ns;
    if (k->steady_steps && s->steady_gpu_ns && s->steady_total_ns) {
        /* while the loop runs: the share that says whether the GPU waits */
        k->gpu_busy_share = (double)s->steady_gpu_ns / (double)s->steady_total_ns;
        k->gpu_share_of_steps = 1;
    } else if (p->gpu_busy_ns && p->end_ns > p->start_ns) {
        k->gpu_busy_share = (double)p->gpu_busy_ns / (double)(p->end_ns - p->start_ns);
    }
    k->growth_known = p->growth.by_steps;
    k->device_growth_per_step = p->growth.device_bytes_per_step;
    k->rss_growth_per_step = p->growth.rss_bytes_per_step;
}
