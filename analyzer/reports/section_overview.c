/*
 * section_overview.c - the run as a whole, on top of every report: how
 * many processes, how long, how many records, and what was lost or
 * damaged on the way (the figures below undercount then); in the text
 * report also what profiling cost and which pids the host knows by
 * another number.
 */
#include "section_overview.h"

#include <cjson/cJSON.h>
#include <inttypes.h>

#include "analysis/pass/process_ends.h"
#include "reports/format/format.h"

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

/* What the profiler's own threads cost, from the processes that ended normally: the others'
 * end records, which carry it, are missing, and so would be their CPU from the share. */
static void print_profiling_cost(FILE *out, const struct pi_analysis *a)
{
    uint64_t profiler = 0, process = 0;
    size_t counted = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (!p->profiler_cpu_ns)
            continue;
        profiler += p->profiler_cpu_ns;
        process += p->cpu_user_ns + p->cpu_sys_ns;
        counted++;
    }
    if (!profiler || !process)
        return;
    char text[320], over[96] = "";
    size_t unended = pi_processes_unended(a, NULL, 0);
    if (unended)
        snprintf(over, sizeof(over), ", over the %zu processes that wrote their end (%zu did not)",
                 counted, unended);
    snprintf(text, sizeof(text), "the profiler's own threads used %s of CPU, %.2f%% of the "
             "traced processes' CPU time (hooks not included)%s",
             pi_format_ns((double)profiler), 100.0 * (double)profiler / (double)process, over);
    pi_print_wrapped(out, "profiling cost: ", text, 2, PI_SCREEN_WIDTH);
    fputc('\n', out);
}

static void print_warning(FILE *out, const char *warning)
{
    pi_print_wrapped(out, "warning: ", warning, 2, PI_SCREEN_WIDTH);
    fputc('\n', out);
}

void pi_report_overview_text(FILE *out, const struct pi_analysis *a)
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
        print_warning(out, warning);
    }
    if (a->strings_lost) {
        snprintf(warning, sizeof(warning), "%" PRIu64 " names, paths or call stacks were not kept "
                 "(the recorder's string table was full); the records that name them show none",
                 a->strings_lost);
        print_warning(out, warning);
    }
    if (a->inherited_unresolved) {
        const char *why = "";
        for (size_t i = 0; i < a->process_count && !why[0]; i++)
            if (a->processes[i].inherited_unresolved)
                why = a->processes[i].inherited_unresolved;
        snprintf(warning, sizeof(warning), "%" PRIu64 " fork child%s' names, paths and stacks "
                 "inherited from %s parent are unresolved (%.200s): they read as unknown",
                 a->inherited_unresolved, a->inherited_unresolved == 1 ? "" : "ren",
                 a->inherited_unresolved == 1 ? "its" : "their", why);
        print_warning(out, warning);
    }
    char pids[160];
    size_t unended = pi_processes_unended(a, pids, sizeof(pids));
    if (unended) {
        snprintf(warning, sizeof(warning), "%zu process%s (pid %s) ended without their end "
                 "record: killed outright (SIGKILL, the OOM killer) or still running when read; "
                 "their last moments are missing", unended, unended == 1 ? "" : "es", pids);
        print_warning(out, warning);
    }
    size_t cut = pi_files_cut_short(a);
    if (cut) {
        snprintf(warning, sizeof(warning), "%zu trace file%s end%s in the middle of a frame (the "
                 "process was killed while writing, or the disk was full): read to the last whole "
                 "frame; figures below undercount", cut, cut == 1 ? "" : "s", cut == 1 ? "s" : "");
        print_warning(out, warning);
    }
    if (a->damaged_files) {
        snprintf(warning, sizeof(warning), "%" PRIu64 " bytes of damaged trace data (failing "
                 "their checks) were skipped in %" PRIu64 " files, %" PRIu64 " frames of records "
                 "with them; the frames around them were read; figures below undercount",
                 a->damaged_bytes, a->damaged_files, a->damaged_frames);
        print_warning(out, warning);
    }
}

void pi_report_overview_json(cJSON *root, const struct pi_analysis *a)
{
    cJSON *inputs = cJSON_AddObjectToObject(root, "inputs");
    cJSON_AddNumberToObject(inputs, "files", (double)a->process_count);
    cJSON_AddNumberToObject(inputs, "records", (double)a->records);
    cJSON_AddNumberToObject(inputs, "lost", (double)a->lost);
    cJSON_AddNumberToObject(inputs, "strings_lost", (double)a->strings_lost);
    if (a->inherited_unresolved)
        cJSON_AddNumberToObject(inputs, "inherited_unresolved", (double)a->inherited_unresolved);
    size_t unended = pi_processes_unended(a, NULL, 0), cut = pi_files_cut_short(a);
    if (unended)
        cJSON_AddNumberToObject(inputs, "processes_without_end", (double)unended);
    if (cut)
        cJSON_AddNumberToObject(inputs, "files_cut_short", (double)cut);
    if (a->damaged_files) {
        cJSON_AddNumberToObject(inputs, "damaged_files", (double)a->damaged_files);
        cJSON_AddNumberToObject(inputs, "damaged_bytes", (double)a->damaged_bytes);
        cJSON_AddNumberToObject(inputs, "damaged_frames", (double)a->damaged_frames);
    }
    cJSON_AddNumberToObject(inputs, "span_ns", (double)(a->end_ns - a->base_ns));
    cJSON_AddNumberToObject(inputs, "base_monotonic_ns", (double)a->base_ns);
    cJSON_AddBoolToObject(inputs, "exact", a->options.exact);
    cJSON_AddNumberToObject(inputs, "relative_error", a->options.exact ? 0 : PI_HISTOGRAM_RELATIVE_ERROR);
}

void pi_report_overview_html(FILE *out, const struct pi_analysis *a)
{
    fprintf(out, "<h1>profinject report</h1>\n<p>%zu processes, %s, %" PRIu64 " records, %" PRIu64
                 " lost, %" PRIu64 " names, paths or stacks not kept",
            a->process_count, pi_format_ns((double)(a->end_ns - a->base_ns)), a->records, a->lost,
            a->strings_lost);
    size_t unended = pi_processes_unended(a, NULL, 0), cut = pi_files_cut_short(a);
    if (unended)
        fprintf(out, ", <b>%zu without their end record</b>", unended);
    if (cut)
        fprintf(out, ", <b>%zu trace file%s cut short</b>", cut, cut == 1 ? "" : "s");
    if (a->inherited_unresolved)
        fprintf(out, ", <b>%" PRIu64 " fork children's inherited names unresolved</b>",
                a->inherited_unresolved);
    fputs("</p>\n", out);
}
