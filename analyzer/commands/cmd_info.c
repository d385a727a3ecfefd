/*
 * cmd_info.c - `profinject-analyze info FILE|DIR...`: what was recorded.
 * Per file the header, record counts and losses; for all files together
 * the process tree (ppid links) and the time span.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "reader/trace_inputs.h"
#include "reports/format/terminal_text.h"

/* stdout, with what a trace names shown safely */
static FILE *info_out;

struct file_summary {
    const char *path;
    int pid, ppid;
    char *command;
    uint64_t start_ns, first_ns, last_ns;
    uint64_t counts[PI_REC_KIND_COUNT];
    uint64_t records, lost, strings_lost;
    int ended, exec_count;
    int64_t end_status;
    uint64_t end_reason;
    uint64_t profiler_cpu_ns;
    int printed;
};

static int summarize(const char *path, struct file_summary *s)
{
    char error[600];
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    if (!reader) {
        fprintf(stderr, "profinject-analyze: %s\n", error);
        return -1;
    }
    const struct pi_trace_info *info = pi_reader_info(reader);
    s->path = path;
    s->pid = info->header.pid;
    s->ppid = info->header.ppid;
    s->command = strdup(info->strings[PI_HDR_CMDLINE]);
    s->start_ns = s->first_ns = s->last_ns = info->header.start_monotonic_ns;
    struct pi_event ev;
    int got;
    while ((got = pi_reader_next(reader, &ev)) == PI_READ_EVENT) {
        const struct pi_record *r = &ev.rec;
        s->counts[r->kind]++;
        s->records++;
        if (pi_record_has_time(r->kind)) {
            if (ev.ts_ns < s->first_ns)
                s->first_ns = ev.ts_ns;
            if (ev.ts_ns + ev.dur_ns > s->last_ns)
                s->last_ns = ev.ts_ns + ev.dur_ns;
        }
        if (r->kind == PI_REC_LOST && r->arg[1] == PI_LOST_STRINGS)
            s->strings_lost += r->arg[0];
        else if (r->kind == PI_REC_LOST)
            s->lost += r->arg[0];
        else if (r->kind == PI_REC_PROCESS_END) {
            s->ended = 1;
            s->end_status = (int64_t)r->arg[0];
            s->end_reason = r->arg[1];
            s->profiler_cpu_ns = r->arg[2];
        } else if (r->kind == PI_REC_EXEC && !(r->flags & PI_FLAG_FAILED))
            s->exec_count++;
    }
    int result = 0;
    if (got == PI_READ_ERROR) {
        fprintf(stderr, "profinject-analyze: %s\n", pi_reader_error(reader));
        result = -1;
    }
    pi_reader_warn_truncated(stderr, reader);
    pi_reader_close(reader);
    return result;
}

static void print_process(const struct file_summary *s, int depth)
{
    const char *end = !s->ended              ? (s->exec_count ? "replaced by exec" : "no end record")
                      : s->end_reason == PI_END_SIGNAL ? "killed by signal"
                      : s->end_reason == PI_END__EXIT  ? "_exit"
                                                       : "exit";
    fprintf(info_out, "%*s%d  %.60s  [%.3f s, %" PRIu64 " records, %" PRIu64 " lost, %s", depth * 2 + 2, "",
           s->pid, s->command, (double)(s->last_ns - s->first_ns) / 1e9, s->records, s->lost, end);
    if (s->ended)
        fprintf(info_out, " %" PRId64, s->end_status);
    if (s->profiler_cpu_ns)
        fprintf(info_out, ", profiler threads %.1f ms CPU", (double)s->profiler_cpu_ns / 1e6);
    if (s->strings_lost)
        fprintf(info_out, ", %" PRIu64 " names or stacks not kept", s->strings_lost);
    fprintf(info_out, "]\n");
}

/* Children of @pid started after @after (same pid twice means exec). */
static void print_tree(struct file_summary *all, size_t n, size_t index, int depth)
{
    struct file_summary *s = &all[index];
    s->printed = 1;
    print_process(s, depth);
    for (size_t i = 0; i < n; i++)
        if (!all[i].printed && all[i].ppid == s->pid && all[i].pid != s->pid)
            print_tree(all, n, i, depth + 1);
    for (size_t i = 0; i < n; i++)
        if (!all[i].printed && all[i].pid == s->pid && all[i].start_ns >= s->start_ns)
            print_tree(all, n, i, depth); /* the image it exec'd */
}

static int compare_start(const void *a, const void *b)
{
    const struct file_summary *x = a, *y = b;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int has_parent(const struct file_summary *all, size_t n, size_t index)
{
    for (size_t i = 0; i < n; i++)
        if (i != index && (all[i].pid == all[index].ppid ||
                           (all[i].pid == all[index].pid && all[i].start_ns < all[index].start_ns)))
            return 1;
    return 0;
}

int pi_cmd_info(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "usage: profinject-analyze info FILE|DIR...\n");
        return PI_EXIT_USAGE;
    }
    struct pi_trace_inputs inputs;
    if (pi_trace_inputs_collect(&inputs, argv, argc) != 0) {
        pi_trace_inputs_free(&inputs);
        return PI_EXIT_BAD_INPUT;
    }
    info_out = pi_terminal_stream(stdout);
    struct file_summary *all = calloc(inputs.count, sizeof(*all));
    size_t n = 0;
    int status = PI_EXIT_OK;
    for (size_t i = 0; i < inputs.count; i++) {
        if (summarize(inputs.paths[i], &all[n]) != 0)
            status = PI_EXIT_BAD_INPUT;
        if (all[n].path)
            n++;
    }
    qsort(all, n, sizeof(*all), compare_start);
    uint64_t totals[PI_REC_KIND_COUNT] = {0}, records = 0, lost = 0, first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < PI_REC_KIND_COUNT; k++)
            totals[k] += all[i].counts[k];
        records += all[i].records;
        lost += all[i].lost;
        if (all[i].first_ns < first)
            first = all[i].first_ns;
        if (all[i].last_ns > last)
            last = all[i].last_ns;
    }
    fprintf(info_out, "trace files: %zu  records: %" PRIu64 "  lost: %" PRIu64 "  span: %.3f s\n", n, records,
           lost, n ? (double)(last - first) / 1e9 : 0.0);
    fprintf(info_out, "\nprocess tree (pid, command, [duration, records, lost, end]):\n");
    for (size_t i = 0; i < n; i++)
        if (!all[i].printed && !has_parent(all, n, i))
            print_tree(all, n, i, 0);
    for (size_t i = 0; i < n; i++)
        if (!all[i].printed)
            print_tree(all, n, i, 0);
    fprintf(info_out, "\nrecords by kind:\n");
    for (int k = 1; k < PI_REC_KIND_COUNT; k++)
        if (totals[k])
            fprintf(info_out, "  %-14s %12" PRIu64 "\n", pi_record_kind_name((unsigned)k), totals[k]);
    if (inputs.count == 1 && n == 1) {
        char error[600];
        struct pi_reader *reader = pi_reader_open(inputs.paths[0], error, sizeof(error));
        if (reader) {
            fprintf(info_out, "\n");
            pi_print_header(info_out, reader);
            pi_reader_close(reader);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(all[i].command);
    free(all);
    pi_trace_inputs_free(&inputs);
    return pi_finish_stdout(info_out) == 0 ? status : PI_EXIT_BAD_INPUT;
}
