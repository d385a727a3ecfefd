/*
 * report_text.c - the report for terminals: the verdict first, then the
 * steps, where each thread's time went, latency percentiles, the busiest
 * files and memory.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/host/steps.h"
#include "reports/format/format.h"
#include "report.h"
#include "section_collectives.h"
#include "section_device_memory.h"
#include "section_gpu.h"
#include "section_host_memory.h"
#include "section_key_figures.h"
#include "section_latency.h"
#include "section_summary_mode.h"
#include "section_python_time.h"
#include "section_ranks.h"
#include "section_sites.h"
#include "section_steps.h"
#include "section_threads.h"
#include "section_verdict.h"
#include "reports/format/quantiles.h"
#include "verdicts/verdict.h"



/* The capture windows the figures cover, from each process's start. */
static void print_windows(FILE *out, const struct pi_analysis *a)
{
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (!p->window_count)
            continue;
        fprintf(out, "\nCAPTURE WINDOWS of pid %d (times and shares cover these only):",
                p->header.pid);
        uint64_t origin = p->header.start_monotonic_ns;
        for (size_t w = 0; w < p->window_count; w++)
            fprintf(out, "%s %.3f s to %.3f s", w ? "," : "",
                    (double)(p->windows[w].start_ns - origin) / 1e9,
                    (double)(p->windows[w].end_ns - origin) / 1e9);
        fprintf(out, " after its start (%.3f s recorded)\n", (double)p->window_ns / 1e9);
    }
}

/* "exec 2/4" when @p is one image of a chain of execs (the same pid, several files). */
static const char *exec_image(const struct pi_analysis *a, const struct pi_process_info *p,
                              char *out, size_t size)
{
    size_t images = 0, index = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *q = &a->processes[i];
        if (q->header.pid != p->header.pid || q->header.pid_ns != p->header.pid_ns ||
            strcmp(q->host ? q->host : "", p->host ? p->host : "") != 0)
            continue;
        images++;
        index += q->header.start_monotonic_ns < p->header.start_monotonic_ns;
    }
    if (images < 2)
        return "";
    snprintf(out, size, "[exec %zu/%zu] ", index + 1, images);
    return out;
}

static void print_memory(FILE *out, const struct pi_analysis *a)
{
    fprintf(out, "\nMEMORY AND CPU BY PROCESS\n");
    pi_report_host_memory_text(out, a);
    int contained = 0, pss = 0; /* pss: a column where a process read its PSS (format 8) */
    for (size_t i = 0; i < a->process_count; i++) {
        contained |= pi_process_host_pid(&a->processes[i]) != 0;
        pss |= a->processes[i].pss.count > 0;
    }
    if (contained)
        fprintf(out, "  %7s", "host pid");
    fprintf(out, "  %7s %7s %10s %10s", "pid", "ppid", "rss peak", "at");
    if (pss)
        fprintf(out, " %10s", "pss peak");
    fprintf(out, " %12s %12s %10s %10s  %s\n", "growth", "2nd half", "user cpu", "sys cpu",
            "command");
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        uint64_t middle = p->start_ns + (p->end_ns - p->start_ns) / 2;
        char whole[32], half[32];
        snprintf(whole, sizeof(whole), "%.2f MB/s", pi_series_slope(&p->rss, 0) / 1e6);
        snprintf(half, sizeof(half), "%.2f MB/s", pi_series_slope(&p->rss, middle) / 1e6);
        char image[32], host_pid[16] = "-";
        if (pi_process_host_pid(p))
            snprintf(host_pid, sizeof(host_pid), "%d", pi_process_host_pid(p));
        if (contained)
            fprintf(out, "  %8s", host_pid);
        uint64_t peak_at = p->rss_peak_ns > a->base_ns ? p->rss_peak_ns - a->base_ns : 0;
        fprintf(out, "  %7d %7d %10s %10s", p->header.pid, p->header.ppid,
                pi_format_bytes((double)p->rss_peak), pi_format_ns((double)peak_at));
        if (pss)
            fprintf(out, " %10s", p->pss.count ? pi_format_bytes((double)p->pss_peak) : "-");
        fprintf(out, " %12s %12s %10s %10s  %s%.40s\n", whole, half,
                pi_format_ns((double)p->cpu_user_ns), pi_format_ns((double)p->cpu_sys_ns),
                exec_image(a, p, image, sizeof(image)), p->command);
    }
}

/* Pids are as each process saw itself; a container's are not the host's. */
static void print_host_pids(FILE *out, const struct pi_analysis *a)
{
    char text[2048];
    size_t used = 0;
    for (size_t i = 0; i < a->process_count && used < sizeof(text); i++) {
        int host = pi_process_host_pid(&a->processes[i]);
        if (host)
            used += (size_t)snprintf(text + used, sizeof(text) - used, "%spid %d is %d on the host",
                                     used ? ", " : "", a->processes[i].header.pid, host);
    }
    if (!used)
        return;
    pi_print_wrapped(out, "in other PID namespaces (containers): ", text, 2, PI_SCREEN_WIDTH);
    fputc('\n', out);
}

/* What the profiler's own threads cost, from the processes that ended normally. */
static void print_profiling_cost(FILE *out, const struct pi_analysis *a)
{
    uint64_t profiler = 0, process = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (!p->profiler_cpu_ns)
            continue;
        profiler += p->profiler_cpu_ns;
        process += p->cpu_user_ns + p->cpu_sys_ns;
    }
    if (!profiler || !process)
        return;
    char text[256];
    snprintf(text, sizeof(text), "the profiler's own threads used %s of CPU, %.2f%% of the "
             "traced processes' CPU time (hooks not included)",
             pi_format_ns((double)profiler), 100.0 * (double)profiler / (double)process);
    pi_print_wrapped(out, "profiling cost: ", text, 2, PI_SCREEN_WIDTH);
    fputc('\n', out);
}

void pi_report_text(FILE *out, struct pi_analysis *a)
{
    fprintf(out, "profinject report: %zu processes, %s, %" PRIu64 " records, %" PRIu64 " lost\n\n",
            a->process_count, pi_format_ns((double)(a->end_ns - a->base_ns)), a->records, a->lost);
    print_profiling_cost(out, a);
    print_host_pids(out, a);
    char warning[400];
    if (a->lost) {
        snprintf(warning, sizeof(warning), "%" PRIu64 " records were dropped while recording: "
                 "no trace buffer was free (the threads held them all: PROFINJECT_POOL_MAX_MB; or "
                 "the writer fell behind) or the writer could not finish as the process ended; the "
                 "recording process said which on stderr. Figures below undercount", a->lost);
        pi_print_wrapped(out, "warning: ", warning, 2, PI_SCREEN_WIDTH);
        fputc('\n', out);
    }
    if (a->strings_lost) {
        snprintf(warning, sizeof(warning), "%" PRIu64 " names, paths or call stacks were not kept "
                 "(the recorder's string table was full); the records that name them show none",
                 a->strings_lost);
        pi_print_wrapped(out, "warning: ", warning, 2, PI_SCREEN_WIDTH);
        fputc('\n', out);
    }
    if (a->damaged_files) {
        snprintf(warning, sizeof(warning), "%" PRIu64 " bytes of damaged trace data (failing "
                 "their checks) were skipped in %" PRIu64 " files, %" PRIu64 " frames of records "
                 "with them; the frames around them were read; figures below undercount",
                 a->damaged_bytes, a->damaged_files, a->damaged_frames);
        pi_print_wrapped(out, "warning: ", warning, 2, PI_SCREEN_WIDTH);
        fputc('\n', out);
    }
    pi_report_verdict_text(out, a);
    pi_report_key_figures_text(out, a);
    print_windows(out, a);
    pi_report_summary_mode_text(out, a);
    pi_report_steps_text(out, a);
    pi_report_ranks_text(out, a);
    pi_report_sites_text(out, a);
    pi_report_python_time_text(out, a);
    pi_report_collectives_text(out, a);
    pi_report_gpu_text(out, a);
    pi_report_device_memory_text(out, a);
    pi_report_threads_text(out, a);
    pi_report_latency_text(out, a);
    print_memory(out, a);
}
