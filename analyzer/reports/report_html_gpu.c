/*
 * report_html_gpu.c - the sections a GPU job is judged by, right below
 * the verdict: the training process's step time over the run (one point
 * per step), its GPU busy share over time, its device memory over time
 * with the peak marked, and the kernels with the most GPU time.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "report_html.h"
#include "analysis/gpu/gpu_analysis.h"
#include "analysis/gpu/gpu_timeline.h"
#include "reports/format/html_plot.h"
#include "verdicts/verdict.h"

#define TOP_KERNELS 10
/* at most this many points in the step time plot */
#define MAX_POINTS 1000

static double seconds(const struct pi_analysis *a, uint64_t ns)
{
    return ns > a->base_ns ? (double)(ns - a->base_ns) / 1e9 : 0;
}

/* x and y axis ends: the largest values shown */
static void axis_ends(FILE *out, double x_end, const char *x_format, double y_end)
{
    char x_text[64];
    snprintf(x_text, sizeof(x_text), x_format, x_end);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
            MARGIN + PLOT_W, MARGIN + PLOT_H + 14, x_text);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.3g</text>\n",
            MARGIN - 4, MARGIN + 4, y_end);
}

static void step_time_plot(FILE *out, const struct pi_analysis *a, const struct pi_process_info *p)
{
    uint64_t start, end, longest = 1, first = 0, last = 1;
    const struct pi_steps *s = &p->steps;
    for (uint64_t i = 0; pi_steps_span(s, i, &start, &end); i++) {
        longest = end - start > longest ? end - start : longest;
        first = i == 0 ? start : first;
        last = end;
    }
    if (!s->count) {
        fprintf(out, "<h2>Step time over the run</h2>\n<p id=\"step-time-none\">no steps were "
                     "found in pid %d (no DataLoader batches nor NVTX ranges seen)</p>\n",
                p->header.pid);
        return;
    }
    char title[200];
    snprintf(title, sizeof(title), "Step time over the run (pid %d, %" PRIu64 " steps, %s)",
             p->header.pid, s->count, p->steps_from ? p->steps_from : "?");
    pi_html_axis_frame(out, "step-time", title, "step start (s)", "step time (ms)");
    double span = last > first ? (double)(last - first) : 1;
    axis_ends(out, (double)(last - first) / 1e9, "%.2f", (double)longest / 1e6);
    /* a point a step; past MAX_POINTS, a point for the slowest step of each group of
     * consecutive steps, so that the page stays small whatever the run's length */
    uint64_t per = (s->count + MAX_POINTS - 1) / MAX_POINTS;
    for (uint64_t g = 0; g * per < s->count; g++) {
        uint64_t slowest = g * per, slow_start = 0, slow_end = 0;
        for (uint64_t i = g * per; i < (g + 1) * per && pi_steps_span(s, i, &start, &end); i++)
            if (i == g * per || end - start > slow_end - slow_start) {
                slowest = i;
                slow_start = start;
                slow_end = end;
            }
        char which[96];
        if (per > 1)
            snprintf(which, sizeof(which), "slowest of steps %" PRIu64 " to %" PRIu64 ": step %" PRIu64,
                     g * per + 1, (g + 1) * per < s->count ? (g + 1) * per : s->count, slowest + 1);
        else
            snprintf(which, sizeof(which), "step %" PRIu64, slowest + 1);
        fprintf(out, "<circle class=\"step-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\">"
                     "<title>%s%s: %.2f ms at %.3f s</title></circle>\n",
                MARGIN + PLOT_W * (double)(slow_start - first) / span,
                MARGIN + PLOT_H - PLOT_H * (double)(slow_end - slow_start) / (double)longest,
                slowest < s->warmup ? "#ff7f0e" : "#1f77b4", which,
                slowest < s->warmup ? " (warm-up)" : "", (double)(slow_end - slow_start) / 1e6,
                seconds(a, slow_start));
    }
    fputs("</svg>\n", out);
}

static void gpu_busy_plot(FILE *out, const struct pi_analysis *a, const struct pi_process_info *p)
{
    const struct pi_gpu_timeline *t = p->gpu_timeline;
    unsigned n = t ? pi_gpu_timeline_buckets(t) : 0;
    if (n == 0) {
        fprintf(out, "<h2>GPU busy over time</h2>\n<p id=\"gpu-busy-none\">no GPU durations were "
                     "recorded for pid %d (GPU timing: %s)</p>\n",
                p->header.pid, a->gpu.timing_reason[0] ? a->gpu.timing_reason : "none");
        return;
    }
    unsigned from = (unsigned)((t->first_gpu_ns - t->origin_ns) / t->bucket_ns);
    char title[200];
    snprintf(title, sizeof(title), "GPU busy over time (pid %d, %.2f s busy, %s buckets)",
             p->header.pid, (double)p->gpu_busy_ns / 1e9, pi_format_ns((double)t->bucket_ns));
    pi_html_axis_frame(out, "gpu-busy", title, "time (s)", "GPU busy (%)");
    axis_ends(out, seconds(a, t->origin_ns + (uint64_t)n * t->bucket_ns), "%.2f", 100);
    double width = (double)PLOT_W / (n - from);
    for (unsigned i = from; i < n; i++) {
        double share = pi_gpu_timeline_share(t, i), height = PLOT_H * share;
        fprintf(out, "<rect class=\"gpu-bucket\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" "
                     "height=\"%.1f\" fill=\"#2ca02c\"><title>%.3f s: %.0f%%</title></rect>\n",
                MARGIN + width * (i - from), MARGIN + PLOT_H - height, width, height,
                seconds(a, t->origin_ns + (uint64_t)i * t->bucket_ns), 100 * share);
    }
    fputs("</svg>\n", out);
}

/*
 * Device memory of the training process; the peak is marked, and so is
 * growth over the steady steps, where the analysis found some worth a
 * finding: a dashed line from the step where it starts.
 */
#define GROWTH_MARK_MIN_BYTES (16.0 * 1024 * 1024) /* the device memory-growth finding's minimum */

static void growth_marker(FILE *out, const struct pi_analysis *a, const struct pi_process_info *p,
                          double span)
{
    const struct pi_memory_growth *g = &p->growth;
    uint64_t start, end;
    if (!g->by_steps || !g->device_start_step ||
        g->device_bytes_per_step * (double)g->device_growing_steps < GROWTH_MARK_MIN_BYTES ||
        !pi_steps_span(&p->steps, g->device_start_step - 1, &start, &end))
        return;
    double x = MARGIN + PLOT_W * (double)(start - a->base_ns) / span;
    fprintf(out, "<line class=\"device-growth\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                 "stroke=\"#d62728\" stroke-dasharray=\"4 3\"><title>grows %.2f MiB per step "
                 "from step %" PRIu64 " (%.3f s)</title></line>\n",
            x, MARGIN, x, MARGIN + PLOT_H, g->device_bytes_per_step / (1024.0 * 1024.0),
            g->device_start_step, seconds(a, start));
}

static void device_memory_plot(FILE *out, const struct pi_analysis *a,
                               const struct pi_process_info *p)
{
    const struct pi_gpu_memory *m = p->gpu;
    if (!m || m->series.count == 0 || m->peak == 0) {
        fprintf(out, "<h2>Device memory over time</h2>\n<p id=\"device-memory-none\">pid %d "
                     "allocated no device memory</p>\n",
                p->header.pid);
        return;
    }
    double span = (double)(a->end_ns > a->base_ns ? a->end_ns - a->base_ns : 1);
    char title[200];
    snprintf(title, sizeof(title), "Device memory over time (pid %d, peak %s)", p->header.pid,
             pi_format_bytes((double)m->peak));
    pi_html_axis_frame(out, "device-memory", title, "time (s)", "device memory (MB)");
    axis_ends(out, span / 1e9, "%.2f", (double)m->peak / 1e6);
    fputs("<polyline class=\"device-memory\" fill=\"none\" stroke=\"#9467bd\" stroke-width=\"1.5\" "
          "points=\"",
          out);
    pi_html_series_points(out, &m->series, a->base_ns, span, (double)m->peak);
    fputs("\"/>\n", out);
    fprintf(out, "<circle class=\"device-peak\" cx=\"%.1f\" cy=\"%d\" r=\"4\" fill=\"#d62728\">"
                 "<title>peak %" PRIu64 " B at %.3f s</title></circle>\n",
            MARGIN + PLOT_W * (double)(m->peak_ns - a->base_ns) / span, MARGIN, m->peak,
            seconds(a, m->peak_ns));
    growth_marker(out, a, p, span);
    fputs("</svg>\n", out);
}

static void top_kernels_table(FILE *out, const struct pi_analysis *a)
{
    size_t n, shown = 0;
    struct pi_latency_entry **gpu = pi_latency_sorted(&a->calls, "gpu", &n);
    fputs("<h2>Top kernels by GPU time</h2>\n", out);
    if (a->gpu.gpu_busy_ns == 0) {
        fputs("<p id=\"top-kernels-none\">no GPU durations were recorded</p>\n", out);
        free(gpu);
        return;
    }
    fputs("<table id=\"top-kernels\"><tr><th>kernel</th><th>launches timed</th><th>GPU time</th>"
          "<th>share of GPU busy</th><th>mean</th><th>p50</th><th>max</th></tr>\n",
          out);
    for (size_t i = 0; gpu && i < n && shown < TOP_KERNELS; i++) {
        const struct pi_latency_entry *e = gpu[i];
        if (strcmp(e->detail, "kernel") != 0 || e->durations.count == 0)
            continue;
        shown++;
        fputs("<tr class=\"kernel\"><td class=\"name\">", out);
        pi_html_text(out, e->name);
        fprintf(out, "</td><td>%" PRIu64 "</td><td class=\"total\" data-ns=\"%" PRIu64 "\">%s</td>",
                e->durations.count, e->durations.sum, pi_format_ns((double)e->durations.sum));
        fprintf(out, "<td>%.1f%%</td>", 100.0 * (double)e->durations.sum / (double)a->gpu.gpu_busy_ns);
        fprintf(out, "<td>%s</td>", pi_format_ns((double)e->durations.sum / (double)e->durations.count));
        fprintf(out, "<td>%s</td>", pi_format_ns(pi_histogram_quantile((struct pi_histogram *)&e->durations, 0.5)));
        fprintf(out, "<td>%s</td></tr>\n", pi_format_ns((double)e->durations.max));
    }
    fputs("</table>\n", out);
    free(gpu);
}

/* Copies by direction, host memory kind and size: the text report's table. */
static void copies_table(FILE *out, const struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted((struct pi_latency_table *)&a->calls,
                                                       "copy", &n);
    if (!list || n == 0) {
        free(list);
        return;
    }
    fputs("<h2>Copies</h2>\n<table id=\"copies\"><tr><th>direction</th><th>host memory, "
          "size</th><th>count</th><th>bytes</th><th>host p50</th><th>host total</th><th>GPU "
          "total</th></tr>\n",
          out);
    for (size_t i = 0; i < n; i++) {
        const struct pi_latency_entry *e = list[i];
        struct pi_latency_entry *g =
            pi_latency_get((struct pi_latency_table *)&a->calls, "gpu", e->name, "copy");
        fputs("<tr class=\"copy\"><td>", out);
        pi_html_text(out, e->name);
        fputs("</td><td>", out);
        pi_html_text(out, e->detail);
        fprintf(out, "</td><td class=\"count\">%" PRIu64 "</td><td class=\"bytes\" data-bytes=\"%"
                     PRIu64 "\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                e->durations.count, e->bytes, pi_format_bytes((double)e->bytes),
                pi_format_ns(pi_histogram_quantile((struct pi_histogram *)&e->durations, 0.5)),
                pi_format_ns((double)e->durations.sum),
                g && g->durations.count ? pi_format_ns((double)g->durations.sum) : "-");
    }
    fputs("</table>\n", out);
    free(list);
}

void pi_html_gpu_sections(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info *p = pi_training_process(a);
    if (!p)
        return;
    step_time_plot(out, a, p);
    gpu_busy_plot(out, a, p);
    device_memory_plot(out, a, p);
    top_kernels_table(out, a);
    copies_table(out, a);
}
