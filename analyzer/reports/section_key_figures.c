/*
 * section_key_figures.c - the figures a user looks for first, about the
 * training process (verdicts/verdict.h says which it is): the text
 * report's KEY NUMBERS and the page's cards under the verdict show the
 * same ones, from here. A figure that is not known says so; records lost
 * are shown when there are none, as 0.
 */
#include "section_key_figures.h"

#include <inttypes.h>
#include <string.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/host/requests.h"
#include "analysis/host/steps.h"
#include "analysis/pass/process_ends.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "section_host_memory.h"
#include "verdicts/verdict.h"

struct pi_key_figures {
    int pid;                          /* of the training process, 0: none found */
    uint64_t steady_steps;            /* 0: no steps found */
    double steps_per_s;
    double step_p50_ns, step_p95_ns;
    double gpu_busy_share;            /* -1: no GPU work */
    int gpu_share_of_steps;           /* 1: of the steady steps' time; 0: of the process's run */
    uint64_t gpu_busy_ns;
    uint64_t device_peak;             /* the largest process's; 0: no CUDA allocations */
    uint64_t host_peak;               /* the tree's PSS (or RSS) at one moment; 0: no samples */
    const char *host_figure;          /* "PSS" or "RSS": which host_peak adds up */
    unsigned host_processes;          /* alive at that moment */
    int growth_known;                 /* over steady steps */
    double device_growth_per_step, rss_growth_per_step; /* bytes */
    uint64_t lost, strings_lost;
    char unfinished[96]; /* "; N without end record, M cut short" (files), or "" */
    const struct pi_requests *requests; /* the requests the process served, NULL: none */
};

/* The key figures of @a into @k. */
static void key_figures_of(const struct pi_analysis *a, struct pi_key_figures *k)
{
    memset(k, 0, sizeof(*k));
    k->gpu_busy_share = -1;
    k->lost = a->lost;
    k->strings_lost = a->strings_lost;
    size_t unended = pi_processes_unended(a, NULL, 0), cut = pi_files_cut_short(a);
    if (unended || cut)
        snprintf(k->unfinished, sizeof(k->unfinished), "; %zu without end record, %zu cut short",
                 unended, cut);
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
    k->requests = p->requests;
    const struct pi_steps *s = &p->steps;
    k->steady_steps = pi_steps_steady_count(s);
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

/* KEY NUMBERS: the same figures as the page's cards. */
void pi_report_key_figures_text(FILE *out, const struct pi_analysis *a)
{
    struct pi_key_figures k;
    key_figures_of(a, &k);
    fprintf(out, "\nKEY NUMBERS%s\n", k.pid ? "" : " (no training process found)");
    if (k.steps_per_s)
        fprintf(out, "  steps             %.2f steps/s over %" PRIu64 " steady steps of pid %d\n"
                     "  step time         p50 %s, p95 %s\n",
                k.steps_per_s, k.steady_steps, k.pid, pi_format_ns(k.step_p50_ns),
                pi_format_ns(k.step_p95_ns));
    else if (!k.requests) /* a serving process has requests, not steps */
        fprintf(out, "  steps             none found\n");
    const struct pi_requests *q = k.requests;
    if (q)
        fprintf(out, "  requests          %" PRIu64 " at %.2f/s, p50 %s, p99 %s (pid %d)\n",
                q->latency.count, pi_requests_per_s(q), pi_format_ns(q->latency.ns[PI_REQUEST_P50]),
                pi_format_ns(q->latency.ns[PI_REQUEST_P99]), k.pid);
    if (k.gpu_busy_share >= 0)
        fprintf(out, "  GPU busy          %.0f%% of %s\n", 100 * k.gpu_busy_share,
                k.gpu_share_of_steps ? "the steady steps' time" : "the process's run");
    else
        fprintf(out, "  GPU busy          no GPU work recorded\n");
    fprintf(out, "  peak memory       device %s, host %s (%s of the tree)\n",
            k.device_peak ? pi_format_bytes((double)k.device_peak) : "-",
            k.host_peak ? pi_format_bytes((double)k.host_peak) : "-", k.host_figure);
    if (k.growth_known)
        fprintf(out, "  growth per step   device %.2f MiB, RSS %.2f MiB\n",
                k.device_growth_per_step / 1048576.0, k.rss_growth_per_step / 1048576.0);
    fprintf(out, "  lost              %" PRIu64 " records, %" PRIu64 " names, paths or stacks%s\n",
            k.lost, k.strings_lost, k.unfinished);
}

static void card(FILE *out, const char *id, const char *label, const char *value,
                 const char *detail)
{
    fprintf(out, "<div class=\"card\" id=\"card-%s\"><div class=\"label\">%s</div>"
                 "<div class=\"value\">%s</div><div class=\"detail\">%s</div></div>\n",
            id, label, value, detail);
}

static void step_cards(FILE *out, const struct pi_key_figures *k)
{
    char value[64] = "-", detail[128] = "no training steps found";
    if (k->steps_per_s) {
        snprintf(value, sizeof(value), "%.2f", k->steps_per_s);
        snprintf(detail, sizeof(detail), "%" PRIu64 " steady steps of pid %d", k->steady_steps,
                 k->pid);
    }
    card(out, "steps-per-second", "steps/s", value, detail);
    snprintf(value, sizeof(value), "-");
    snprintf(detail, sizeof(detail), "no training steps found");
    if (k->step_p50_ns) {
        snprintf(value, sizeof(value), "%s", pi_format_ns(k->step_p50_ns));
        snprintf(detail, sizeof(detail), "p95 %s", pi_format_ns(k->step_p95_ns));
    }
    card(out, "step-time", "step time p50", value, detail);
}

static void gpu_card(FILE *out, const struct pi_key_figures *k)
{
    char value[64] = "-", detail[160] = "no GPU work recorded";
    if (k->gpu_busy_share >= 0) {
        snprintf(value, sizeof(value), "%.0f%%", 100 * k->gpu_busy_share);
        if (k->gpu_share_of_steps)
            snprintf(detail, sizeof(detail), "of the steady steps' time; %s of GPU work in all",
                     pi_format_ns((double)k->gpu_busy_ns));
        else
            snprintf(detail, sizeof(detail), "of the run of pid %d (no steps found); %s of GPU "
                     "work", k->pid, pi_format_ns((double)k->gpu_busy_ns));
    }
    card(out, "gpu-busy", "GPU busy", value, detail);
}

static void memory_cards(FILE *out, const struct pi_key_figures *k)
{
    char value[64] = "-", detail[160] = "no CUDA allocations recorded";
    if (k->device_peak) {
        snprintf(value, sizeof(value), "%s", pi_format_bytes((double)k->device_peak));
        snprintf(detail, sizeof(detail), "allocated through CUDA, the largest process's peak");
    }
    card(out, "device-memory", "peak device memory", value, detail);
    snprintf(value, sizeof(value), "-");
    snprintf(detail, sizeof(detail), "no RSS samples");
    if (k->host_peak) {
        snprintf(value, sizeof(value), "%s", pi_format_bytes((double)k->host_peak));
        snprintf(detail, sizeof(detail), "%s of the whole tree, %u process%s alive then",
                 k->host_figure, k->host_processes, k->host_processes == 1 ? "" : "es");
    }
    card(out, "host-memory", "peak host memory", value, detail);
    snprintf(value, sizeof(value), "-");
    snprintf(detail, sizeof(detail), "no steady steps to measure it over");
    if (k->growth_known) {
        snprintf(value, sizeof(value), "%.2f MiB", k->device_growth_per_step / 1048576.0);
        snprintf(detail, sizeof(detail), "device per step; RSS %.2f MiB per step",
                 k->rss_growth_per_step / 1048576.0);
    }
    card(out, "growth", "memory growth per step", value, detail);
}

/* A process of the job that died: the first card, as its finding is the first one. */
static void death_card(FILE *out, const struct pi_analysis *a)
{
    struct pi_finding deaths[PI_MAX_FINDINGS];
    memset(deaths, 0, sizeof(deaths));
    int n = pi_verdict_deaths(a, deaths, PI_MAX_FINDINGS), died = 0;
    const struct pi_finding *first = NULL; /* the earliest death */
    for (int i = 0; i < n; i++) {
        if (strcmp(deaths[i].kind, "died") != 0)
            continue;
        died++;
        if (!first || deaths[i].ended_ns < first->ended_ns)
            first = &deaths[i];
    }
    if (!first)
        return;
    const char *value = !first->cause                                      ? "died"
                        : strcmp(first->cause, "oom-killer") == 0          ? "OOM-killed"
                        : strcmp(first->cause, "device-out-of-memory") == 0 ? "out of GPU memory"
                                                                           : "died";
    fprintf(out, "<div class=\"card\" id=\"card-died\"><div class=\"label\">%s</div>"
                 "<div class=\"value\">%s</div><div class=\"detail\">",
            died == 1 ? "a process died" : "processes died", value);
    pi_html_text(out, first->summary);
    fputs("</div></div>\n", out);
}

void pi_report_key_figures_html(FILE *out, const struct pi_analysis *a)
{
    struct pi_key_figures k;
    key_figures_of(a, &k);
    fputs("<div id=\"cards\">\n", out);
    death_card(out, a);
    step_cards(out, &k);
    if (k.requests) {
        const struct pi_requests *q = k.requests;
        char value[32], detail[160];
        snprintf(value, sizeof(value), "%.2f", pi_requests_per_s(q));
        snprintf(detail, sizeof(detail), "%" PRIu64 " requests of pid %d: p50 %s, p99 %s",
                 q->latency.count, k.pid, pi_format_ns(q->latency.ns[PI_REQUEST_P50]),
                 pi_format_ns(q->latency.ns[PI_REQUEST_P99]));
        card(out, "requests", "requests/s", value, detail);
    }
    gpu_card(out, &k);
    memory_cards(out, &k);
    char value[32], detail[256];
    snprintf(value, sizeof(value), "%" PRIu64, k.lost);
    snprintf(detail, sizeof(detail), "%" PRIu64 " names, paths or stacks not kept%s",
             k.strings_lost, k.unfinished);
    card(out, "lost", "records lost", value, detail);
    fputs("</div>\n", out);
}
