/*
 * section_spans.c - the calls of marked Python functions (the optimizer's
 * step, backward, the DataLoader's next(), the outermost module, the
 * user's own: analysis/host/spans.h) in every report: per process, by name
 * and kind, the longest in total first. Their durations are the calls' own,
 * entry to return, not samples. The text shows the first rows of a few
 * processes, the training process first; JSON has them all.
 */
#include "section_spans.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/host/spans.h"
#include "analysis/pass/training_process.h"
#include "reports/format/call_site_format.h"
#include "reports/format/figures.h"
#include "reports/format/format.h"

#define TEXT_ROWS 15
#define TEXT_PROCESSES 4
#define HTML_ROWS 50

_Static_assert(PI_SPAN_QUANTILE_COUNT == PI_QUANTILE_COUNT,
               "a span row keeps the percentiles every latency table gives");

/* The levels the rows keep (spans.h): p50, p90, p95, p99, p99.9, max. */
enum { P50, P90, P95, P99, P99_9, MAX };

static int by_total(const void *a, const void *b)
{
    const struct pi_span_row *x = *(const struct pi_span_row *const *)a;
    const struct pi_span_row *y = *(const struct pi_span_row *const *)b;
    return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

/* @p's rows, the longest in total first; NULL when none (caller frees). */
static const struct pi_span_row **sorted_rows(const struct pi_process_info *p, size_t *count)
{
    const struct pi_spans *s = p->spans;
    *count = s ? s->count : 0;
    if (!*count)
        return NULL;
    const struct pi_span_row **rows = malloc(*count * sizeof(*rows));
    if (!rows) {
        *count = 0;
        return NULL;
    }
    for (size_t i = 0; i < *count; i++)
        rows[i] = &s->rows[i];
    qsort(rows, *count, sizeof(*rows), by_total);
    return rows;
}

static const char *name_of(const struct pi_span_row *row)
{
    return row->name ? row->name : "?";
}

/* The calls' CPU time where it was read for every one of them, else "-": the recorder reads
 * a thread's CPU clock only for names whose calls are long enough to afford it. */
static const char *cpu_text(const struct pi_span_row *row)
{
    return row->count && row->cpu_calls == row->count ? pi_format_ns((double)row->cpu_ns) : "-";
}

/* The resident memory the calls changed where it was read for every one of them, signed;
 * else "-" (read, as the CPU time, only for names whose calls are long enough). */
static const char *host_text(const struct pi_span_row *row, char *out, size_t size)
{
    if (!row->count || row->host_calls != row->count)
        return "-";
    snprintf(out, size, "%s%s", row->host_bytes < 0 ? "-" : "+",
             pi_format_bytes(row->host_bytes < 0 ? -(double)row->host_bytes
                                                 : (double)row->host_bytes));
    return out;
}

static void print_process(FILE *out, const struct pi_process_info *p)
{
    size_t count;
    const struct pi_span_row **rows = sorted_rows(p, &count);
    if (!rows)
        return;
    fprintf(out, "\nSPANS (pid %d: calls of marked Python functions, entry to return, by total "
                 "time)\n",
            p->header.pid);
    fprintf(out, "  %-32s %-15s %8s %9s %9s %9s %9s %9s %10s\n", "name", "kind", "calls", "total",
            "p50", "p99", "max", "CPU", "host mem");
    for (size_t i = 0; i < count && i < TEXT_ROWS; i++) {
        const struct pi_span_row *r = rows[i];
        char fitted[64], host[32];
        fprintf(out, "  %-32s %-15s %8" PRIu64,
                pi_format_fit(name_of(r), 32, fitted, sizeof(fitted)), pi_span_kind_name(r->kind),
                r->count);
        fprintf(out, " %9s %9s %9s %9s %9s %10s", pi_format_ns((double)r->total_ns),
                pi_format_ns(r->quantile_ns[P50]), pi_format_ns(r->quantile_ns[P99]),
                pi_format_ns(r->quantile_ns[MAX]), cpu_text(r), host_text(r, host, sizeof(host)));
        if (r->raised) /* the calls that ended by an exception are in the figures */
            fprintf(out, "  %" PRIu64 " raised", r->raised);
        fputc('\n', out);
    }
    if (count > TEXT_ROWS)
        fprintf(out, "  %zu more (all in the JSON report)\n", count - TEXT_ROWS);
    if (p->spans->unlisted_calls)
        fprintf(out, "  %" PRIu64 " calls of names past the first %d, not listed\n",
                p->spans->unlisted_calls, PI_SPAN_ROWS_MAX);
    free(rows);
}

void pi_report_spans_text(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info *training = pi_training_process(a);
    size_t shown = 0, more = 0;
    if (training && training->spans && training->spans->count) {
        print_process(out, training);
        shown++;
    }
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (p == training || !p->spans || !p->spans->count)
            continue;
        if (shown < TEXT_PROCESSES) {
            print_process(out, p);
            shown++;
        } else {
            more++;
        }
    }
    if (more)
        fprintf(out, "  (%zu more processes with spans: in the JSON report)\n", more);
}

void pi_report_spans_json(cJSON *process, const struct pi_process_info *p)
{
    cJSON *list = cJSON_AddArrayToObject(process, "spans");
    size_t count;
    const struct pi_span_row **rows = sorted_rows(p, &count);
    for (size_t i = 0; i < count; i++) {
        const struct pi_span_row *r = rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name_of(r));
        cJSON_AddStringToObject(o, "kind", pi_span_kind_name(r->kind));
        /* the keys of every latency table ("p99_9_ns") */
        pi_quantile_values_json(o, r->count, r->total_ns, pi_spans_mean_ns(r), r->quantile_ns);
        cJSON_AddNumberToObject(o, "cpu_ns", (double)r->cpu_ns);
        cJSON_AddNumberToObject(o, "cpu_calls", (double)r->cpu_calls);
        cJSON_AddNumberToObject(o, "device_bytes_change", (double)r->device_bytes);
        cJSON_AddNumberToObject(o, "host_bytes_change", (double)r->host_bytes);
        cJSON_AddNumberToObject(o, "host_calls", (double)r->host_calls);
        cJSON_AddNumberToObject(o, "raised", (double)r->raised);
        cJSON_AddNumberToObject(o, "threads", (double)r->threads);
        cJSON_AddItemToArray(list, o);
    }
    free(rows);
    if (p->spans && p->spans->unlisted_calls)
        cJSON_AddNumberToObject(process, "spans_unlisted_calls", (double)p->spans->unlisted_calls);
}

void pi_report_spans_html(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info *p = pi_training_process(a);
    size_t count;
    const struct pi_span_row **rows = p ? sorted_rows(p, &count) : NULL;
    if (!rows)
        return;
    fprintf(out, "<h2>Marked Python functions</h2>\n<p>pid %d: each call entry to return, by "
                 "total time.</p>\n<table id=\"spans\"><tr><th>name</th><th>kind</th>"
                 "<th>calls</th><th>total</th><th>p50</th><th>p99</th><th>max</th><th>CPU</th>"
                 "<th>device memory</th><th>host memory</th><th>raised</th></tr>\n",
            p->header.pid);
    for (size_t i = 0; i < count && i < HTML_ROWS; i++) {
        const struct pi_span_row *r = rows[i];
        fputs("<tr><td>", out);
        pi_html_text(out, name_of(r));
        fprintf(out, "</td><td>%s</td><td>%" PRIu64 "</td>", pi_span_kind_name(r->kind), r->count);
        fprintf(out, "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>",
                pi_format_ns((double)r->total_ns), pi_format_ns(r->quantile_ns[P50]),
                pi_format_ns(r->quantile_ns[P99]), pi_format_ns(r->quantile_ns[MAX]),
                cpu_text(r));
        char host[32];
        fprintf(out, "<td>%s%s</td><td>%s</td><td>%" PRIu64 "</td></tr>\n",
                r->device_bytes < 0 ? "-" : "",
                pi_format_bytes(r->device_bytes < 0 ? -(double)r->device_bytes
                                                    : (double)r->device_bytes),
                host_text(r, host, sizeof(host)), r->raised);
    }
    fputs("</table>\n", out);
    free(rows);
}
