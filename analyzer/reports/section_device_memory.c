/*
 * section_device_memory.c - the device memory of each process in every
 * report: peak, allocations and frees, pools, per device, and the call
 * sites of what was never freed or live at the peak; on the page, the
 * training process's device memory over time with its peak and growth
 * marked, and a flame graph of what it still held at the end.
 */
#include "section_device_memory.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <string.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/sites/call_tree.h"
#include "reports/format/call_site_format.h"
#include "reports/format/figures.h"
#include "reports/format/format.h"
#include "reports/format/html_flame.h"
#include "reports/format/html_plot.h"

#define TOP_LEAKS 5

void pi_report_device_memory_text(FILE *out, const struct pi_analysis *a)
{
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        const struct pi_gpu_memory *m = p->gpu;
        if (!m || (m->allocations == 0 && m->pinned_peak == 0 && m->live_at_window_start == 0))
            continue;
        uint64_t leaked = 0;
        for (size_t k = 0; k < m->leak_count; k++)
            leaked += m->leaks[k].bytes;
        fprintf(out, "\n  device memory of pid %d: peak %s at %s, %" PRIu64 " allocations, %" PRIu64
                     " frees, %s still allocated at the end; pinned host peak %s\n",
                p->header.pid, pi_format_bytes((double)m->peak),
                pi_format_ns((double)(m->peak_ns > a->base_ns ? m->peak_ns - a->base_ns : 0)),
                m->allocations, m->frees, pi_format_bytes((double)leaked),
                pi_format_bytes((double)m->pinned_peak));
        if (m->live_at_window_start)
            fprintf(out, "    %s already allocated when the capture window opened\n",
                    pi_format_bytes((double)m->live_at_window_start));
        if (m->pool_count)
            fprintf(out, "    stream-ordered pools (cudaMallocAsync) reserved %s at most, %s at the end\n",
                    pi_format_bytes((double)m->pool_reserved_peak),
                    pi_format_bytes((double)m->pool_reserved_end));
        for (unsigned d = 0; m->devices_seen > 1 && d < m->devices_seen; d++)
            fprintf(out, "    device %u: peak %s, %s at the end\n", d,
                    pi_format_bytes((double)m->device_peak[d]),
                    pi_format_bytes((double)m->device_live[d]));
        for (size_t k = 0; k < m->leak_count && k < TOP_LEAKS; k++) {
            fprintf(out, "    never freed: %s in %" PRIu64 " allocations from %.160s\n",
                    pi_format_bytes((double)m->leaks[k].bytes), m->leaks[k].count,
                    pi_site_headline(&m->leaks[k]));
            pi_call_site_text(out, m->leaks[k].site, m->leaks[k].text, "        ");
        }
        for (int k = 0; k < m->at_peak_count && k < 3; k++) {
            fprintf(out, "    live at the peak: %s from %.160s\n",
                    pi_format_bytes((double)m->at_peak[k].bytes), pi_site_headline(&m->at_peak[k]));
            pi_call_site_text(out, m->at_peak[k].site, m->at_peak[k].text, "        ");
        }
    }
}

static cJSON *gpu_memory_json(const struct pi_analysis *a, const struct pi_gpu_memory *m)
{
    cJSON *o = cJSON_CreateObject();
    uint64_t leaked = 0;
    for (size_t i = 0; i < m->leak_count; i++)
        leaked += m->leaks[i].bytes;
    cJSON_AddNumberToObject(o, "peak_bytes", (double)m->peak);
    cJSON_AddNumberToObject(o, "peak_at_ns", (double)(m->peak_ns > a->base_ns ? m->peak_ns - a->base_ns : 0));
    cJSON_AddNumberToObject(o, "allocations", (double)m->allocations);
    cJSON_AddNumberToObject(o, "frees", (double)m->frees);
    cJSON_AddNumberToObject(o, "allocated_bytes", (double)m->allocated_bytes);
    cJSON_AddNumberToObject(o, "live_at_end_bytes", (double)leaked);
    cJSON_AddNumberToObject(o, "live_at_window_start_bytes", (double)m->live_at_window_start);
    cJSON_AddNumberToObject(o, "pinned_host_peak_bytes", (double)m->pinned_peak);
    cJSON_AddNumberToObject(o, "pool_reserved_peak_bytes", (double)m->pool_reserved_peak);
    cJSON_AddNumberToObject(o, "pool_reserved_at_end_bytes", (double)m->pool_reserved_end);
    cJSON *devices = cJSON_AddArrayToObject(o, "devices");
    for (unsigned d = 0; d < m->devices_seen; d++) {
        cJSON *device = cJSON_CreateObject();
        cJSON_AddNumberToObject(device, "device", d);
        cJSON_AddNumberToObject(device, "peak_bytes", (double)m->device_peak[d]);
        cJSON_AddNumberToObject(device, "live_at_end_bytes", (double)m->device_live[d]);
        cJSON_AddItemToArray(devices, device);
    }
    cJSON_AddItemToObject(o, "never_freed", pi_site_bytes_json(m->leaks, m->leak_count));
    cJSON_AddItemToObject(o, "live_at_peak", pi_site_bytes_json(m->at_peak, (size_t)m->at_peak_count));
    pi_series_json(o, "samples", &m->series, a->base_ns);
    return o;
}

void pi_report_device_memory_json(cJSON *process, const struct pi_analysis *a,
                                  const struct pi_process_info *p)
{
    if (p->gpu)
        cJSON_AddItemToObject(process, "gpu_memory", gpu_memory_json(a, p->gpu));
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
            g->device_start_step, pi_html_seconds(a->base_ns, start));
}

void pi_report_device_memory_html(FILE *out, const struct pi_analysis *a,
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
    pi_html_axis_ends(out, span / 1e9, (double)m->peak / 1e6);
    fputs("<polyline class=\"device-memory\" fill=\"none\" stroke=\"#9467bd\" stroke-width=\"1.5\" "
          "points=\"",
          out);
    pi_html_series_points(out, &m->series, a->base_ns, span, (double)m->peak);
    fputs("\"/>\n", out);
    fprintf(out, "<circle class=\"device-peak\" cx=\"%.1f\" cy=\"%d\" r=\"4\" fill=\"#d62728\">"
                 "<title>peak %" PRIu64 " B at %.3f s</title></circle>\n",
            MARGIN + PLOT_W * (double)(m->peak_ns - a->base_ns) / span, MARGIN, m->peak,
            pi_html_seconds(a->base_ns, m->peak_ns));
    growth_marker(out, a, p, span);
    fputs("</svg>\n", out);
}


/* A frame's name in the memory graph: Python's function and file, else the symbol. */
static const char *frame_label(const struct pi_site_frame *f, char *buf, size_t size)
{
    if (f->python) {
        snprintf(buf, size, "%s (%s)", f->function ? f->function : "?",
                 pi_call_site_base_name(f->file));
    } else {
        const char *slash = f->module ? strrchr(f->module, '/') : NULL;
        snprintf(buf, size, "%s", f->symbol   ? f->symbol
                                  : f->function ? f->function
                                  : slash       ? slash + 1
                                                : "?");
    }
    return buf;
}

#define PATH_MAX_FRAMES 128

/* Device memory still held at the end, by the call path that allocated it. */
void pi_report_device_memory_flame(FILE *out, const struct pi_process_info *p)
{
    const struct pi_gpu_memory *m = p->gpu;
    struct pi_call_tree tree = {0};
    static char labels[PATH_MAX_FRAMES][200];
    const char *path[PATH_MAX_FRAMES];
    for (size_t k = 0; m && k < m->leak_count; k++) {
        const struct pi_call_site *site = m->leaks[k].site;
        size_t depth = 0;
        /* outermost first: Python's frames (the outer calls), then the native ones */
        size_t python = site ? site->python_count : 0, all = site ? site->count : 0;
        for (size_t i = python; i > 0 && depth < PATH_MAX_FRAMES; i--, depth++)
            path[depth] = frame_label(&site->frames[i - 1], labels[depth], sizeof(labels[0]));
        for (size_t i = all; i > python && depth < PATH_MAX_FRAMES; i--, depth++)
            path[depth] = frame_label(&site->frames[i - 1], labels[depth], sizeof(labels[0]));
        if (!depth)
            path[depth++] = "(no call site recorded)";
        pi_call_tree_add(&tree, path, depth, m->leaks[k].bytes);
    }
    if (!tree.count || !tree.nodes[0].weight) {
        fputs("<h2>Device memory still held at the end, by call site</h2>\n<p id=\"flame-memory-"
              "none\">no device memory was still held at the end (or no CUDA allocations)</p>\n",
              out);
    } else {
        char title[200];
        snprintf(title, sizeof(title), "Device memory still held at the end, by call site "
                 "(pid %d, %s)", p->header.pid, pi_format_bytes((double)tree.nodes[0].weight));
        pi_html_flame(out, "flame-memory", title, &tree, 1);
    }
    pi_call_tree_free(&tree);
}

