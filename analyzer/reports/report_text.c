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
#include "section_summary_mode.h"
#include "section_python_time.h"
#include "section_ranks.h"
#include "section_sites.h"
#include "section_steps.h"
#include "section_threads.h"
#include "section_verdict.h"
#include "reports/format/quantiles.h"
#include "verdicts/verdict.h"


#define TOP_CALLS 25
#define TOP_FILES 10

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

static void print_latency_row(FILE *out, struct pi_latency_entry *e, int width)
{
    struct pi_histogram *h = &e->durations;
    char name[256];
    snprintf(name, sizeof(name), "%s%s%s", e->name, e->detail[0] ? " " : "", e->detail);
    fprintf(out, "  %-*.*s %9" PRIu64 " %10s %10s", width, width, name, h->count,
            pi_format_ns((double)h->sum), pi_format_ns(pi_histogram_mean(h)));
    for (int q = 0; q < PI_QUANTILE_COUNT; q++)
        fprintf(out, " %10s", pi_format_ns(pi_histogram_quantile(h, pi_quantiles[q])));
    fprintf(out, " %10s\n", e->bytes ? pi_format_bytes((double)e->bytes) : "-");
}

static void print_latency_header(FILE *out, const char *first, int width)
{
    fprintf(out, "  %-*s %9s %10s %10s", width, first, "count", "total", "mean");
    for (int q = 0; q < PI_QUANTILE_COUNT; q++)
        fprintf(out, " %10s", pi_quantile_names[q]);
    fprintf(out, " %10s\n", "bytes");
}

/* A file the import system reads: Python source, bytecode, path files, extension modules. */
static int module_file(const char *path)
{
    static const char *const endings[] = {".pyc", ".py", ".pth"};
    size_t length = strlen(path);
    for (size_t i = 0; i < sizeof(endings) / sizeof(endings[0]); i++) {
        size_t e = strlen(endings[i]);
        if (length >= e && strcmp(path + length - e, endings[i]) == 0)
            return 1;
    }
    return strstr(path, ".so") && (strstr(path, "-packages/") || strstr(path, "/lib-dynload/"));
}

/* The files the job used, busiest first; the modules its imports loaded counted on one line. */
static void print_busiest_files(FILE *out, struct pi_latency_entry **list, size_t n)
{
    size_t modules = 0, shown = 0;
    double module_ns = 0;
    fprintf(out, "\nBUSIEST FILES (by total time in opens, reads, writes; module imports apart)\n");
    fprintf(out, "  %-48s %7s %10s %10s %10s %10s\n", "path", "opens", "bytes", "total", "p50",
            "p99");
    for (size_t i = 0; i < n; i++) {
        struct pi_latency_entry *e = list[i];
        if (module_file(e->name)) {
            modules++;
            module_ns += e->durations.sum;
            continue;
        }
        if (shown++ >= TOP_FILES)
            continue;
        char name[64];
        pi_format_fit(e->name, 48, name, sizeof(name));
        fprintf(out, "  %-48s %7" PRIu64 " %10s %10s %10s %10s\n", name, e->opens,
                pi_format_bytes((double)e->bytes), pi_format_ns((double)e->durations.sum),
                pi_format_ns(pi_histogram_quantile(&e->durations, 0.5)),
                pi_format_ns(pi_histogram_quantile(&e->durations, 0.99)));
    }
    if (shown > TOP_FILES)
        fprintf(out, "  ... and %zu more files\n", shown - TOP_FILES);
    if (modules)
        fprintf(out, "  module imports: %zu files (.py, .pyc, extension modules), %s\n", modules,
                pi_format_ns(module_ns));
}

static void print_latency(FILE *out, const struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(&a->calls, NULL, &n);
    if (!list || n == 0) {
        free(list);
        return;
    }
    fprintf(out, "\nLATENCY (by total time%s)\n",
            a->options.exact ? ", exact" : ", within 1% relative error");
    const char *group = NULL;
    for (int pass = 0; pass < 2; pass++) {
        /* I/O first, then waits and the rest */
        for (size_t i = 0, shown = 0; i < n && shown < TOP_CALLS; i++) {
            int is_io = strcmp(list[i]->group, "io") == 0;
            if (is_io != (pass == 0) || strcmp(list[i]->group, "gpu") == 0 ||
                strcmp(list[i]->group, "kernel") == 0 || strcmp(list[i]->group, "copy") == 0)
                continue;
            if (!group || strcmp(group, list[i]->group) != 0) {
                group = list[i]->group;
                print_latency_header(out, group, 30);
            }
            print_latency_row(out, list[i], 30);
            shown++;
        }
    }
    free(list);

    list = pi_latency_sorted(&a->files, NULL, &n);
    if (list && n)
        print_busiest_files(out, list, n);
    free(list);
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
    print_latency(out, a);
    print_memory(out, a);
}
