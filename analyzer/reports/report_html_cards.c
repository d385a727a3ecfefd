/*
 * report_html_cards.c - the HTML report's first screen under the verdict:
 * one card per key figure (key_figures.h). A figure that is not known says
 * so; records lost are shown when there are none, as 0.
 */
#include <inttypes.h>
#include <stdio.h>

#include "reports/format/format.h"
#include "key_figures.h"
#include "report_html.h"
#include "reports/format/html_plot.h"

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

void pi_html_cards(FILE *out, const struct pi_analysis *a)
{
    struct pi_key_figures k;
    pi_key_figures_of(a, &k);
    fputs("<div id=\"cards\">\n", out);
    step_cards(out, &k);
    gpu_card(out, &k);
    memory_cards(out, &k);
    char value[32], detail[128];
    snprintf(value, sizeof(value), "%" PRIu64, k.lost);
    snprintf(detail, sizeof(detail), "%" PRIu64 " names, paths or stacks not kept", k.strings_lost);
    card(out, "lost", "records lost", value, detail);
    fputs("</div>\n", out);
}
