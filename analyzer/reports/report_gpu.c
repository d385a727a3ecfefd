/*
 * report_gpu.c - the GPU part of the text report: how GPU time was
 * measured, kernels (host launch latency beside GPU duration), copies by
 * direction, host memory kind and size, CUDA calls, and device memory per
 * process with the call sites of what was never freed.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/format/format.h"
#include "analysis/gpu/gpu_analysis.h"
#include "reports/format/call_site_format.h"
#include "report.h"
#include "section_sites.h"

#define TOP_KERNELS 20
#define TOP_LEAKS 5

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
    fprintf(out, "  %-40s %8s %10s %10s | %10s %10s %10s %10s %10s\n", "kernel", "launches",
            "launch p50", "launch p99", "gpu total", "gpu p50", "gpu p90", "gpu p99", "gpu max");
    for (size_t i = 0; i < n && i < TOP_KERNELS; i++) {
        struct pi_histogram *host = &list[i]->durations;
        struct pi_latency_entry *g = pi_latency_get(&a->calls, "gpu", list[i]->name, "kernel");
        struct pi_histogram *gpu = g ? &g->durations : NULL;
        fprintf(out, "  %-40.40s %8" PRIu64 " %10s %10s | ", list[i]->name, host->count,
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

static void print_memory(FILE *out, struct pi_analysis *a)
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
    print_memory(out, a);
}
