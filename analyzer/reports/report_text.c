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
#include "section_capture_windows.h"
#include "section_collectives.h"
#include "section_device_memory.h"
#include "section_gpu.h"
#include "section_host_memory.h"
#include "section_key_figures.h"
#include "section_latency.h"
#include "section_summary_mode.h"
#include "section_processes.h"
#include "section_python_time.h"
#include "section_ranks.h"
#include "section_sites.h"
#include "section_steps.h"
#include "section_threads.h"
#include "section_verdict.h"
#include "reports/format/quantiles.h"
#include "verdicts/verdict.h"



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
    pi_report_capture_windows_text(out, a);
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
    pi_report_processes_text(out, a);
}
