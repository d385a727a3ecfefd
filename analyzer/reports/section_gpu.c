/*
 * section_gpu.c - the GPU section of every report: how GPU time was
 * measured and how busy the GPU was, kernels (host launch latency beside
 * GPU duration) and copies by direction, host memory kind and size. Device
 * memory has a section of its own (section_device_memory.c).
 */
#include "section_gpu.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/gpu/gpu_timeline.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "reports/format/html_plot.h"
#include "reports/format/kernel_labels.h"
#include "section_sites.h"

#define TEXT_KERNELS 20
#define HTML_KERNELS 10

static const char *source_name(int source)
{
    return source == PI_GPU_TIMING_CUPTI    ? "CUPTI"
           : source == PI_GPU_TIMING_EVENTS ? "event pairs"
                                            : "absent";
}

/* A timing source that timed nothing: the GPU columns are missing, not an idle GPU. */
static void print_missing_durations(FILE *out, struct pi_analysis *a)
{
    if (a->gpu.timing_source != PI_GPU_TIMING_CUPTI && a->gpu.timing_source != PI_GPU_TIMING_EVENTS)
        return;
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(&a->calls, "kernel", &n);
    uint64_t launches = 0, timed = 0;
    for (size_t i = 0; list && i < n; i++) {
        struct pi_latency_entry *g = pi_latency_get(&a->calls, "gpu", list[i]->name, "kernel");
        launches += list[i]->durations.count;
        timed += g ? g->durations.count : 0;
    }
    free(list);
    if (launches && !timed)
        fprintf(out, "  none of the %" PRIu64 " kernel launches got a GPU duration from %s: the GPU "
                "columns are missing, not an idle GPU\n", launches, source_name(a->gpu.timing_source));
}

static void print_kernels(FILE *out, struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(&a->calls, "kernel", &n);
    if (!list || n == 0) {
        free(list);
        return;
    }
    fprintf(out, "  %-56s %8s %10s %10s | %10s %10s %10s %10s %10s\n", "kernel", "launches",
            "launch p50", "launch p99", "gpu total", "gpu p50", "gpu p90", "gpu p99", "gpu max");
    struct pi_kernel_labels labels;
    pi_kernel_labels_make(a, &labels);
    for (size_t i = 0; i < n && i < TEXT_KERNELS; i++) {
        struct pi_histogram *host = &list[i]->durations;
        struct pi_latency_entry *g = pi_latency_get(&a->calls, "gpu", list[i]->name, "kernel");
        struct pi_histogram *gpu = g ? &g->durations : NULL;
        fprintf(out, "  %-56.56s %8" PRIu64 " %10s %10s | ", pi_kernel_label(&labels, list[i]->name),
                host->count,
                pi_format_ns(pi_histogram_quantile(host, 0.5)),
                pi_format_ns(pi_histogram_quantile(host, 0.99)));
        if (gpu && gpu->count)
            fprintf(out, "%10s %10s %10s %10s %10s\n", pi_format_ns((double)gpu->sum),
                    pi_format_ns(pi_histogram_quantile(gpu, 0.5)),
                    pi_format_ns(pi_histogram_quantile(gpu, 0.9)),
                    pi_format_ns(pi_histogram_quantile(gpu, 0.99)), pi_format_ns((double)gpu->max));
        else
            fprintf(out, "%10s\n", "-");
        pi_report_kernel_lines(out, a, list[i]->name, "      ");
    }
    pi_kernel_labels_free(&labels);
    free(list);
}

static void print_copies(FILE *out, struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(&a->calls, "copy", &n);
    if (list && n) {
        fprintf(out, "\n  %-8s %-22s %7s %10s %10s %10s | %10s\n", "copy", "host memory, size",
                "count", "bytes", "host p50", "host total", "gpu total");
        for (size_t i = 0; i < n; i++) {
            struct pi_latency_entry *g = pi_latency_get(&a->calls, "gpu", list[i]->name, "copy");
            fprintf(out, "  %-8s %-22s %7" PRIu64 " %10s %10s %10s | %10s\n", list[i]->name,
                    list[i]->detail, list[i]->durations.count,
                    pi_format_bytes((double)list[i]->bytes),
                    pi_format_ns(pi_histogram_quantile(&list[i]->durations, 0.5)),
                    pi_format_ns((double)list[i]->durations.sum),
                    g && g->durations.count ? pi_format_ns((double)g->durations.sum) : "-");
        }
    }
    free(list);
}

void pi_report_gpu_text(FILE *out, struct pi_analysis *a)
{
    if (a->gpu.timing_source < 0) {
        int any = 0;
        for (size_t i = 0; i < a->process_count; i++)
            any |= a->processes[i].gpu != NULL;
        if (!any)
            return;
    }
    fprintf(out, "\nGPU (GPU time: %s%s%s; GPU busy %s in all)\n", source_name(a->gpu.timing_source),
            a->gpu.timing_reason[0] ? " - " : "", a->gpu.timing_reason,
            pi_format_ns((double)a->gpu.gpu_busy_ns));
    print_missing_durations(out, a);
    print_kernels(out, a);
    print_copies(out, a);
}

void pi_report_gpu_json(cJSON *root, const struct pi_analysis *a)
{
    cJSON *gpu = cJSON_AddObjectToObject(root, "gpu");
    cJSON_AddStringToObject(gpu, "timing", a->gpu.timing_source == PI_GPU_TIMING_CUPTI    ? "cupti"
                                           : a->gpu.timing_source == PI_GPU_TIMING_EVENTS ? "events"
                                                                                          : "absent");
    cJSON_AddStringToObject(gpu, "timing_reason", a->gpu.timing_reason);
    cJSON_AddNumberToObject(gpu, "busy_ns", (double)a->gpu.gpu_busy_ns);
}

void pi_report_gpu_process_json(cJSON *process, const struct pi_process_info *p)
{
    cJSON_AddNumberToObject(process, "gpu_busy_ns", (double)p->gpu_busy_ns);
}

void pi_report_gpu_busy_html(FILE *out, const struct pi_analysis *a, const struct pi_process_info *p)
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
    pi_html_axis_ends(out, pi_html_seconds(a->base_ns, t->origin_ns + (uint64_t)n * t->bucket_ns), 100);
    double width = (double)PLOT_W / (n - from);
    for (unsigned i = from; i < n; i++) {
        double share = pi_gpu_timeline_share(t, i), height = PLOT_H * share;
        fprintf(out, "<rect class=\"gpu-bucket\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" "
                     "height=\"%.1f\" fill=\"#2ca02c\"><title>%.3f s: %.0f%%</title></rect>\n",
                MARGIN + width * (i - from), MARGIN + PLOT_H - height, width, height,
                pi_html_seconds(a->base_ns, t->origin_ns + (uint64_t)i * t->bucket_ns), 100 * share);
    }
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
    struct pi_kernel_labels labels; /* the short name shown, the full one on hover */
    pi_kernel_labels_make(a, &labels);
    for (size_t i = 0; gpu && i < n && shown < HTML_KERNELS; i++) {
        const struct pi_latency_entry *e = gpu[i];
        if (strcmp(e->detail, "kernel") != 0 || e->durations.count == 0)
            continue;
        shown++;
        fputs("<tr class=\"kernel\"><td class=\"name\" title=\"", out);
        pi_html_text(out, e->name);
        fputs("\">", out);
        pi_html_text(out, pi_kernel_label(&labels, e->name));
        fprintf(out, "</td><td>%" PRIu64 "</td><td class=\"total\" data-ns=\"%" PRIu64 "\">%s</td>",
                e->durations.count, e->durations.sum, pi_format_ns((double)e->durations.sum));
        fprintf(out, "<td>%.1f%%</td>", 100.0 * (double)e->durations.sum / (double)a->gpu.gpu_busy_ns);
        fprintf(out, "<td>%s</td>", pi_format_ns((double)e->durations.sum / (double)e->durations.count));
        fprintf(out, "<td>%s</td>", pi_format_ns(pi_histogram_quantile((struct pi_histogram *)&e->durations, 0.5)));
        fprintf(out, "<td>%s</td></tr>\n", pi_format_ns((double)e->durations.max));
    }
    fputs("</table>\n", out);
    pi_kernel_labels_free(&labels);
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

void pi_report_gpu_kernels_html(FILE *out, const struct pi_analysis *a)
{
    top_kernels_table(out, a);
    copies_table(out, a);
}
