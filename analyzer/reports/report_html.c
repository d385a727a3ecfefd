/*
 * report_html.c - one self-contained page for people: the verdict, the
 * GPU-first sections (report_html_gpu.c: step time, GPU busy and device
 * memory over time, top kernels), then SVG plots of RSS over time, latency
 * histograms of the busiest calls and each thread's time breakdown. No
 * script, no network.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "reports/format/html_flame.h"
#include "report.h"
#include "section_collectives.h"
#include "section_device_memory.h"
#include "section_key_figures.h"
#include "section_latency.h"
#include "section_gpu.h"
#include "section_summary_mode.h"
#include "section_python_time.h"
#include "section_ranks.h"
#include "section_sites.h"
#include "section_steps.h"
#include "section_threads.h"
#include "section_verdict.h"
#include "reports/format/html_plot.h"
#include "reports/format/output_file.h"
#include "reports/format/quantiles.h"
#include "verdicts/verdict.h"


#define MEMORY_LINES 16

static void memory_plot(FILE *out, const struct pi_analysis *a)
{
    uint64_t peak = 1;
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].rss_peak > peak)
            peak = a->processes[i].rss_peak;
    double span = (double)(a->end_ns > a->base_ns ? a->end_ns - a->base_ns : 1);
    pi_html_axis_frame(out, "memory-plot", "Memory over time (RSS per process)", "time (s)", "RSS (MB)");
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.0f</text>\n",
            MARGIN - 4, MARGIN + 4, (double)peak / 1e6);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.2f</text>\n",
            MARGIN + PLOT_W, MARGIN + PLOT_H + 14, span / 1e9);
    /* the processes that held the most: a line each is readable up to a dozen or so, and a
     * job of hundreds of ranks keeps the page small */
    uint64_t least = 0;
    if (a->process_count > MEMORY_LINES) {
        uint64_t *peaks = malloc(a->process_count * sizeof(*peaks));
        for (size_t i = 0; peaks && i < a->process_count; i++)
            peaks[i] = a->processes[i].rss_peak;
        if (peaks) {
            pi_sort_u64(peaks, a->process_count);
            least = peaks[a->process_count - MEMORY_LINES];
        }
        free(peaks);
        fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">the %d processes of %zu "
                     "with the highest peaks</text>\n",
                MARGIN, MARGIN - 6, MEMORY_LINES, a->process_count);
    }
    for (size_t i = 0, drawn = 0; i < a->process_count && drawn < MEMORY_LINES; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (p->rss.count == 0 || p->rss_peak < least)
            continue;
        drawn++;
        const char *color = pi_html_colors[i % PI_HTML_COLOR_COUNT];
        fprintf(out, "<polyline class=\"rss\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                color);
        pi_html_series_points(out, &p->rss, a->base_ns, span, (double)peak);
        fprintf(out, "\"><title>pid %d</title></polyline>\n", p->header.pid);
        fprintf(out, "<text x=\"%d\" y=\"%zu\" font-size=\"11\" fill=\"%s\">pid %d</text>\n",
                MARGIN + PLOT_W + 4, MARGIN + 12 + 14 * ((drawn - 1) % 14), color, p->header.pid);
    }
    fputs("</svg>\n", out);
}

/* Each process as it saw itself and, in a container, as the host saw it. */
static void process_table(FILE *out, const struct pi_analysis *a)
{
    fputs("<h2>Processes</h2>\n<table id=\"processes\"><tr><th>pid</th><th>host pid</th>"
          "<th>ppid</th><th>peak RSS</th><th>command</th></tr>\n", out);
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        fprintf(out, "<tr><td>%d</td><td>", p->header.pid);
        if (pi_process_host_pid(p))
            fprintf(out, "%d", pi_process_host_pid(p));
        else
            fputs("same", out);
        fprintf(out, "</td><td>%d</td><td>%s</td><td style=\"text-align:left\">", p->header.ppid,
                pi_format_bytes((double)p->rss_peak));
        pi_html_text(out, p->command ? p->command : "");
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

int pi_report_html(const char *path, struct pi_analysis *a)
{
    char *page = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&page, &size);
    if (!out)
        return -1;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>profinject report</title>\n"
          "<style>body{font-family:sans-serif;margin:2em;max-width:1400px}"
          "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;"
          "text-align:right}td:first-child{text-align:left}"
          "details.site{margin:2px 0}details.native{margin-left:2em;color:#555}"
          "#cards{display:flex;flex-wrap:wrap;gap:8px;margin:1em 0}.card{border:1px solid #ccc;"
          "border-radius:4px;padding:6px 10px;min-width:130px}.card .label{font-size:12px;"
          "color:#555}.card .value{font-size:22px;font-weight:bold}.card .detail{font-size:11px;"
          "color:#777}</style></head><body>\n",
          out);
    fprintf(out, "<h1>profinject report</h1>\n<p>%zu processes, %s, %" PRIu64 " records, %" PRIu64
                 " lost, %" PRIu64 " names, paths or stacks not kept</p>\n",
            a->process_count, pi_format_ns((double)(a->end_ns - a->base_ns)), a->records, a->lost,
            a->strings_lost);
    pi_report_verdict_html(out, a);
    pi_report_key_figures_html(out, a);
    pi_report_steps_html(out, a);
    pi_report_ranks_html(out, a);
    const struct pi_process_info *training = pi_training_process(a);
    if (training) { /* the sections a GPU job is judged by */
        pi_report_step_time_html(out, a, training);
        pi_report_gpu_busy_html(out, a, training);
        pi_report_device_memory_html(out, a, training);
        pi_report_gpu_kernels_html(out, a);
    }
    memory_plot(out, a);
    pi_report_latency_histograms_html(out, a);
    pi_report_threads_html(out, a);
    pi_report_threads_over_time_html(out, a);
    pi_html_flame_script(out);
    pi_report_python_time_flame(out, a, training);
    if (training)
        pi_report_device_memory_flame(out, training);
    pi_report_sites_html(out, a);
    pi_report_python_time_html(out, a);
    pi_report_collectives_html(out, a);
    pi_report_summary_mode_html(out, a);
    pi_report_latency_html(out, a);
    process_table(out, a);
    fputs("</body></html>\n", out);
    fclose(out);
    int result = pi_write_file_atomically(path, page, size);
    free(page);
    return result;
}
