/*
 * report_html_cards.c - the HTML report's first screen under the verdict:
 * one card per figure a user looks for first, about the training process
 * (verdicts/verdict.h says which it is). A figure that is not known says
 * so; records lost are shown when there are none, as 0.
 */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/gpu/gpu_analysis.h"
#include "format.h"
#include "report_html.h"
#include "verdicts/verdict.h"

static void card(FILE *out, const char *id, const char *label, const char *value,
                 const char *detail)
{
    fprintf(out, "<div class=\"card\" id=\"card-%s\"><div class=\"label\">%s</div>"
                 "<div class=\"value\">%s</div><div class=\"detail\">%s</div></div>\n",
            id, label, value, detail);
}

static void step_cards(FILE *out, const struct pi_process_info *p)
{
    char value[64] = "-", detail[128] = "no training steps found";
    const struct pi_steps *s = p ? &p->steps : NULL;
    uint64_t steady = s ? s->count - s->warmup : 0;
    if (steady && s->steady_total_ns) {
        snprintf(value, sizeof(value), "%.2f", (double)steady * 1e9 / (double)s->steady_total_ns);
        snprintf(detail, sizeof(detail), "%" PRIu64 " steady steps of pid %d", steady,
                 p->header.pid);
    }
    card(out, "steps-per-second", "steps/s", value, detail);
    snprintf(value, sizeof(value), "-");
    snprintf(detail, sizeof(detail), "no training steps found");
    /* an exact histogram sorts its samples when asked: not const */
    struct pi_histogram *h = s ? (struct pi_histogram *)&s->steady_ns : NULL;
    if (steady && h->count) {
        snprintf(value, sizeof(value), "%s", pi_format_ns(pi_histogram_quantile(h, 0.5)));
        snprintf(detail, sizeof(detail), "p95 %s", pi_format_ns(pi_histogram_quantile(h, 0.95)));
    }
    card(out, "step-time", "step time p50", value, detail);
}

static void gpu_card(FILE *out, const struct pi_process_info *p)
{
    char value[64] = "-", detail[160] = "no GPU work recorded";
    const struct pi_steps *s = p ? &p->steps : NULL;
    if (s && s->count > s->warmup && s->steady_gpu_ns && s->steady_total_ns) {
        /* while the loop runs: the share that says whether the GPU waits */
        snprintf(value, sizeof(value), "%.0f%%",
                 100.0 * (double)s->steady_gpu_ns / (double)s->steady_total_ns);
        snprintf(detail, sizeof(detail), "of the steady steps' time; %s of GPU work in all",
                 pi_format_ns((double)p->gpu_busy_ns));
    } else if (p && p->gpu_busy_ns && p->end_ns > p->start_ns) {
        snprintf(value, sizeof(value), "%.0f%%",
                 100.0 * (double)p->gpu_busy_ns / (double)(p->end_ns - p->start_ns));
        snprintf(detail, sizeof(detail), "of the run of pid %d (no steps found); %s of GPU work",
                 p->header.pid, pi_format_ns((double)p->gpu_busy_ns));
    }
    card(out, "gpu-busy", "GPU busy", value, detail);
}

static void memory_cards(FILE *out, const struct pi_analysis *a, const struct pi_process_info *p)
{
    char value[64] = "-", detail[160] = "no CUDA allocations recorded";
    uint64_t device_peak = 0;
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].gpu && a->processes[i].gpu->peak > device_peak)
            device_peak = a->processes[i].gpu->peak;
    if (device_peak) {
        snprintf(value, sizeof(value), "%s", pi_format_bytes((double)device_peak));
        snprintf(detail, sizeof(detail), "allocated through CUDA, the largest process's peak");
    }
    card(out, "device-memory", "peak device memory", value, detail);
    snprintf(value, sizeof(value), "-");
    snprintf(detail, sizeof(detail), "no RSS samples");
    if (a->host_memory.rss_peak_bytes) {
        snprintf(value, sizeof(value), "%s", pi_format_bytes((double)a->host_memory.rss_peak_bytes));
        snprintf(detail, sizeof(detail), "RSS of the whole tree, %u process%s alive then",
                 a->host_memory.processes_alive, a->host_memory.processes_alive == 1 ? "" : "es");
    }
    card(out, "host-memory", "peak host memory", value, detail);
    snprintf(value, sizeof(value), "-");
    snprintf(detail, sizeof(detail), "no steady steps to measure it over");
    if (p && p->growth.by_steps) {
        snprintf(value, sizeof(value), "%.2f MiB", p->growth.device_bytes_per_step / 1048576.0);
        snprintf(detail, sizeof(detail), "device per step; RSS %.2f MiB per step",
                 p->growth.rss_bytes_per_step / 1048576.0);
    }
    card(out, "growth", "memory growth per step", value, detail);
}

void pi_html_cards(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info *p = pi_training_process(a);
    fputs("<div id=\"cards\">\n", out);
    step_cards(out, p);
    gpu_card(out, p);
    memory_cards(out, a, p);
    char value[32], detail[128];
    snprintf(value, sizeof(value), "%" PRIu64, a->lost);
    snprintf(detail, sizeof(detail), "%" PRIu64 " names, paths or stacks not kept", a->strings_lost);
    card(out, "lost", "records lost", value, detail);
    fputs("</div>\n", out);
}
