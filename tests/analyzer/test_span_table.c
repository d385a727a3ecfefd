/*
 * Unit: the calls of marked Python functions (PI_REC_SPAN), counted by name
 * and kind against calls the test made: nested calls on three threads,
 * each recorded as it returns. Counts, totals, CPU time, device memory
 * changes (of either sign), resident memory changes of the calls whose
 * memory was read, calls that raised and threads, per name and
 * kind (two ids of one name are one row); percentiles exact against the
 * sorted durations with --exact, within the histogram's error without; the
 * histograms let go once the file is read. Then the reports: the JSON's
 * rows, the text's section, spans.csv with a row per call, and a Chrome
 * trace slice per call.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/host/spans.h"
#include "helpers.h"
#include "reports/export_csv.h"
#include "reports/report.h"
#include "span_trace.h"

/* The names the calls are made under; the fifth is the fourth's text with an id of its own. */
static const struct {
    const char *text;
    unsigned kind;
} catalog[] = {
    {"AdamW.step", PI_SPAN_OPTIMIZER_STEP},
    {"Tensor.backward", PI_SPAN_BACKWARD},
    {"_MultiProcessingDataLoaderIter.__next__", PI_SPAN_DATALOADER_NEXT},
    {"mymod:handle", PI_SPAN_NAMED},
    {"mymod:handle", PI_SPAN_NAMED},
    {"mymod:handle", PI_SPAN_TOKENIZER},
    {"GPT2LMHeadModel", PI_SPAN_MODULE},
    {"TextClassificationPipeline.__call__", PI_SPAN_PIPELINE},
};
#define NAMES (sizeof(catalog) / sizeof(catalog[0]))
#define THREADS 3
#define CALLS_MAX 8192

/* Every call the test made, as it made it. */
static struct span_call calls[CALLS_MAX];
static size_t call_count;
/* whether each call's resident memory was read, and then its change */
static struct resident {
    int read;
    int64_t bytes;
} resident[CALLS_MAX];
static uint32_t ids[NAMES];

static uint64_t next_random(void)
{
    static uint64_t x = 2463534242ull;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
}

static void make_call(uint32_t tid, uint64_t start, uint64_t end, unsigned depth)
{
    cr_assert_lt(call_count, CALLS_MAX);
    size_t which = next_random() % NAMES;
    struct span_call c = {tid, start, end, ids[which], catalog[which].kind, depth,
                          next_random() % 10 == 0, next_random() % (end - start),
                          (int64_t)(next_random() % 2000001) - 1000000};
    struct resident m = {next_random() % 3 != 0, 0};
    m.bytes = m.read ? (int64_t)(next_random() % 8000001) - 3000000 : 0;
    resident[call_count] = m;
    calls[call_count++] = c;
    if (m.read)
        span_trace_call_resident(&c, m.bytes);
    else
        span_trace_call(&c);
}

/* @per_thread top-level calls on each of THREADS threads, some holding a call that holds
 * another, durations from 2 µs to 50 ms; the inner ones return (and are written) first. */
static const char *nested_calls(unsigned per_thread)
{
    span_trace_begin();
    call_count = 0;
    for (size_t i = 0; i < NAMES; i++)
        ids[i] = span_trace_name(catalog[i].text);
    for (uint32_t k = 0; k < THREADS; k++) {
        uint32_t tid = (uint32_t)getpid() + k;
        uint64_t t = 1000 * MS + k * 7 * US;
        for (unsigned i = 0; i < per_thread; i++) {
            uint64_t d = 2 * US + next_random() % (next_random() % 2 ? 50 * MS : 200 * US);
            if (d > 40 * US && next_random() % 2) {
                uint64_t from = t + d / 4, to = t + d / 2;
                if (next_random() % 3 == 0)
                    make_call(tid, from + (to - from) / 4, from + (to - from) / 2, 2);
                make_call(tid, from, to, 1);
            }
            make_call(tid, t, t + d, 0);
            t += d + 1 * US + next_random() % (100 * US);
        }
    }
    return span_trace_write();
}

/* What the test knows of one name and kind. */
struct truth_row {
    const char *name;
    unsigned kind;
    uint64_t count, total, cpu, raised, threads, host_calls;
    int64_t device, host;
    uint64_t durations[CALLS_MAX];
};

static const char *text_of(uint32_t id)
{
    return catalog[id - ids[0]].text;
}

/* The row of @name and @kind, summed from the calls made. */
static void truth_of(const char *name, unsigned kind, struct truth_row *t)
{
    memset(t, 0, sizeof(*t));
    t->name = name;
    t->kind = kind;
    uint32_t seen[THREADS] = {0};
    for (size_t i = 0; i < call_count; i++) {
        const struct span_call *c = &calls[i];
        if (c->kind != kind || strcmp(text_of(c->name), name) != 0)
            continue;
        t->durations[t->count++] = c->end - c->start;
        t->total += c->end - c->start;
        t->cpu += c->cpu_ns;
        t->device += c->device_bytes;
        t->host += resident[i].bytes;
        t->host_calls += resident[i].read != 0;
        t->raised += c->raised != 0;
        if (!seen[c->tid - (uint32_t)getpid()]++)
            t->threads++;
    }
    pi_sort_u64(t->durations, t->count);
}

static const struct pi_span_row *row_named(const struct pi_spans *s, const char *name,
                                           unsigned kind)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->rows[i].kind == kind && strcmp(s->rows[i].name, name) == 0)
            return &s->rows[i];
    return NULL;
}

static void assert_rows(int exact)
{
    struct pi_analysis a = span_trace_analyse(nested_calls(600), exact, NULL);
    const struct pi_spans *s = a.processes[0].spans;
    cr_assert(s);
    cr_assert_eq(s->count, NAMES - 1, "a row per name and kind: %zu", s->count);
    static struct truth_row t;
    for (size_t n = 0; n < NAMES; n++) {
        truth_of(catalog[n].text, catalog[n].kind, &t);
        const struct pi_span_row *r = row_named(s, t.name, t.kind);
        cr_assert(r, "%s (%s)", t.name, pi_span_kind_name(t.kind));
        cr_assert_eq(r->count, t.count, "%s: %llu calls, %llu made", t.name,
                     (unsigned long long)r->count, (unsigned long long)t.count);
        cr_assert_eq(r->total_ns, t.total);
        cr_assert_eq(r->cpu_ns, t.cpu);
        cr_assert_eq(r->device_bytes, t.device);
        cr_assert_eq(r->host_bytes, t.host);
        cr_assert_eq(r->host_calls, t.host_calls);
        cr_assert_eq(r->raised, t.raised);
        cr_assert_eq(r->threads, t.threads);
        cr_assert_null(r->durations, "the histogram is let go once the file is read");
        for (int q = 0; q < PI_SPAN_QUANTILE_COUNT; q++) {
            double truth = span_quantile(t.durations, t.count, pi_span_quantile_levels[q]);
            double error = exact ? 1e-6 : truth * PI_HISTOGRAM_RELATIVE_ERROR + 1;
            cr_assert_float_eq(r->quantile_ns[q], truth, error, "%s: quantile %g %.0f, not %.0f",
                               t.name, pi_span_quantile_levels[q], r->quantile_ns[q], truth);
        }
    }
    pi_analysis_free(&a);
}

Test(span_table, a_row_per_name_and_kind_exact)
{
    assert_rows(1);
}

Test(span_table, a_row_per_name_and_kind_within_the_bucket_error)
{
    assert_rows(0);
}

/* @path's whole text; the caller frees it. */
static char *slurp(const char *path)
{
    FILE *in = fopen(path, "r");
    cr_assert(in, "%s", path);
    cr_assert_eq(fseek(in, 0, SEEK_END), 0);
    long size = ftell(in);
    rewind(in);
    char *text = malloc((size_t)size + 1);
    cr_assert(text && fread(text, 1, (size_t)size, in) == (size_t)size);
    text[size] = '\0';
    fclose(in);
    return text;
}

Test(span_table, the_json_rows_are_the_calls_by_total_time)
{
    struct pi_analysis a = span_trace_analyse(nested_calls(200), 1, NULL);
    cJSON *root = pi_report_json_object(&a);
    cJSON *rows = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "processes"), 0),
                                      "spans");
    cr_assert_eq(cJSON_GetArraySize(rows), (int)(NAMES - 1));
    static struct truth_row t;
    double before = 1e300;
    cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        const char *kind = cJSON_GetObjectItem(row, "kind")->valuestring;
        unsigned k = 0;
        while (k < PI_SPAN_KIND_COUNT && strcmp(pi_span_kind_name(k), kind) != 0)
            k++;
        truth_of(cJSON_GetObjectItem(row, "name")->valuestring, k, &t);
        cr_assert_gt(t.count, 0, "%s (%s) is a name the test called", t.name, kind);
        double total = cJSON_GetObjectItem(row, "total_ns")->valuedouble;
        cr_assert_leq(total, before, "the longest in total first");
        before = total;
        cr_assert_eq(total, (double)t.total);
        cr_assert_eq(cJSON_GetObjectItem(row, "count")->valuedouble, (double)t.count);
        cr_assert_float_eq(cJSON_GetObjectItem(row, "mean_ns")->valuedouble,
                           (double)t.total / (double)t.count, 1e-6);
        static const char *const keys[] = {"p50_ns", "p90_ns", "p95_ns", "p99_ns", "p99_9_ns",
                                           "max_ns"};
        static const double levels[] = {0.5, 0.9, 0.95, 0.99, 0.999, 1.0};
        for (int q = 0; q < 6; q++)
            cr_assert_float_eq(cJSON_GetObjectItem(row, keys[q])->valuedouble,
                               span_quantile(t.durations, t.count, levels[q]), 1e-6, "%s %s",
                               t.name, keys[q]);
        cr_assert_eq(cJSON_GetObjectItem(row, "cpu_ns")->valuedouble, (double)t.cpu);
        cr_assert_eq(cJSON_GetObjectItem(row, "device_bytes_change")->valuedouble,
                     (double)t.device);
        cr_assert_eq(cJSON_GetObjectItem(row, "host_bytes_change")->valuedouble, (double)t.host);
        cr_assert_eq(cJSON_GetObjectItem(row, "host_calls")->valuedouble, (double)t.host_calls);
        cr_assert_eq(cJSON_GetObjectItem(row, "raised")->valuedouble, (double)t.raised);
        cr_assert_eq(cJSON_GetObjectItem(row, "threads")->valuedouble, (double)t.threads);
    }
    cJSON_Delete(root);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    pi_report_text(out, &a);
    fclose(out);
    char heading[64];
    snprintf(heading, sizeof(heading), "\nSPANS (pid %d: ", getpid());
    cr_assert(strstr(text, heading), "%s", text);
    cr_assert(strstr(text, "mymod:handle"), "%s", text);
    free(text);
    pi_analysis_free(&a);
}

/* Calls in one order whatever the output's: by thread, entry, name. */
static int by_thread_and_start(const void *x, const void *y)
{
    const struct span_call *a = x, *b = y;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->depth > b->depth) - (a->depth < b->depth);
}

static unsigned kind_named(const char *name)
{
    unsigned k = 0;
    while (k < PI_SPAN_KIND_COUNT && strcmp(pi_span_kind_name(k), name) != 0)
        k++;
    cr_assert_lt(k, PI_SPAN_KIND_COUNT, "%s", name);
    return k;
}

/* Split the CSV line at @line into at most @max fields in place (quotes taken off, doubled
 * quotes made one); the number of fields. The line's newline becomes its last field's end. */
static int csv_fields(char *line, char **field, int max)
{
    int n = 0;
    char *in = line;
    for (;;) {
        cr_assert_lt(n, max);
        char *out = in;
        field[n++] = out;
        if (*in == '"') {
            for (in++; !(*in == '"' && in[1] != '"'); in++)
                *out++ = *in == '"' ? *++in : *in;
            in++;
        } else {
            while (*in != ',' && *in != '\n' && *in)
                *out++ = *in++;
        }
        char end = *in;
        *out = '\0';
        if (end != ',')
            return n;
        in++;
    }
}

Test(span_table, spans_csv_has_a_row_per_call)
{
    const char *path = nested_calls(100);
    char dir[256];
    make_temp_dir(dir, sizeof(dir));
    struct pi_export export;
    struct pi_analysis_observer observer;
    cr_assert_eq(pi_export_observer(&export, dir, &observer), 0);
    struct pi_analysis a = span_trace_analyse(path, 0, &observer);
    cr_assert_eq(pi_export_finish(&export, &a), 0);
    int64_t to_wall = (int64_t)(a.processes[0].header.start_realtime_ns -
                                a.processes[0].header.start_monotonic_ns);
    char csv[300];
    snprintf(csv, sizeof(csv), "%s/spans.csv", dir);
    char *text = slurp(csv);
    const char *header = "job,rank,host,pid,name,kind,tid,depth,start_ns,duration_ns,cpu_ns,"
                         "device_bytes_change,host_bytes_change,raised\n";
    cr_assert(strncmp(text, header, strlen(header)) == 0, "%.200s", text);
    static struct span_call rows[CALLS_MAX];
    static struct resident row_resident[CALLS_MAX];
    size_t n = 0;
    for (char *line = strchr(text, '\n') + 1, *end; *line; line = end + 1) {
        end = strchr(line, '\n');
        cr_assert(end, "every row ends its line");
        char *field[16];
        cr_assert_eq(csv_fields(line, field, 16), 14, "%.200s", line);
        cr_assert_str_eq(field[0], "", "no launcher named a job");
        cr_assert_str_eq(field[1], "-1", "no rank");
        cr_assert_str_eq(field[2], a.processes[0].host);
        cr_assert_eq(atoi(field[3]), getpid());
        cr_assert_lt(n, CALLS_MAX);
        unsigned kind = kind_named(field[5]);
        uint32_t id = 0;
        for (size_t i = 0; i < NAMES && !id; i++)
            if (strcmp(catalog[i].text, field[4]) == 0 && catalog[i].kind == kind)
                id = ids[i];
        cr_assert(id, "%s (%s) is a name the test called", field[4], field[5]);
        uint64_t start = (uint64_t)(strtoll(field[8], NULL, 10) - to_wall);
        cr_assert(strcmp(field[13], "true") == 0 || strcmp(field[13], "false") == 0);
        row_resident[n] = (struct resident){field[12][0] != '\0', strtoll(field[12], NULL, 10)};
        rows[n++] = (struct span_call){(uint32_t)strtoul(field[6], NULL, 10), start,
                                       start + strtoull(field[9], NULL, 10), id, kind,
                                       (unsigned)strtoul(field[7], NULL, 10),
                                       strcmp(field[13], "true") == 0,
                                       strtoull(field[10], NULL, 10), strtoll(field[11], NULL, 10)};
    }
    cr_assert_eq(n, call_count, "%zu rows for %zu calls", n, call_count);
    static const char *const tables[] = {"ranks", "kernels_by_module", "steps", "kernels",
                                         "collectives", "gemm_shapes", "spans"};
    for (size_t i = 0; i < sizeof(tables) / sizeof(*tables); i++) {
        snprintf(csv, sizeof(csv), "%s/%s.csv", dir, tables[i]);
        unlink(csv);
    }
    cr_assert_eq(rmdir(dir), 0, "the tables only, no file left behind");
    /* each row's resident memory change, where read, is its call's (a call is its thread, its
     * entry and its depth) */
    for (size_t k = 0; k < n; k++) {
        size_t i = 0;
        while (i < call_count && (calls[i].tid != rows[k].tid || calls[i].start != rows[k].start ||
                                  calls[i].depth != rows[k].depth))
            i++;
        cr_assert_lt(i, call_count, "row %zu is a call made", k);
        cr_assert(row_resident[k].read == resident[i].read &&
                      row_resident[k].bytes == resident[i].bytes,
                  "row %zu: resident memory %d %lld, the call's %d %lld", k, row_resident[k].read,
                  (long long)row_resident[k].bytes, resident[i].read, (long long)resident[i].bytes);
    }
    qsort(rows, n, sizeof(*rows), by_thread_and_start);
    qsort(calls, call_count, sizeof(*calls), by_thread_and_start);
    for (size_t i = 0; i < n; i++) {
        const struct span_call *r = &rows[i], *c = &calls[i];
        cr_assert(r->tid == c->tid && r->start == c->start && r->end == c->end &&
                      strcmp(text_of(r->name), text_of(c->name)) == 0 && r->kind == c->kind &&
                      r->depth == c->depth && r->raised == c->raised && r->cpu_ns == c->cpu_ns &&
                      r->device_bytes == c->device_bytes,
                  "row %zu is not the call made", i);
    }
    free(text);
    pi_analysis_free(&a);
}

Test(span_table, the_chrome_trace_has_a_slice_per_call)
{
    const char *path = nested_calls(100);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    struct pi_chrome_trace trace;
    struct pi_analysis_observer observer;
    pi_chrome_trace_observer(&trace, out, &observer);
    struct pi_analysis a = span_trace_analyse(path, 0, &observer);
    fclose(out);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root, "the trace is JSON");
    size_t slices = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents")) {
        cJSON *category = cJSON_GetObjectItem(e, "cat");
        if (!category || strcmp(category->valuestring, "span") != 0)
            continue;
        cr_assert_str_eq(cJSON_GetObjectItem(e, "ph")->valuestring, "X");
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble * 1e3 + (double)a.base_ns;
        uint32_t tid = (uint32_t)cJSON_GetObjectItem(e, "tid")->valueint;
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        const char *kind = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "kind")->valuestring;
        int found = 0;
        for (size_t i = 0; i < call_count && !found; i++)
            found = calls[i].tid == tid && calls[i].start > ts - 1 && calls[i].start < ts + 1 &&
                    strcmp(text_of(calls[i].name), name) == 0 &&
                    strcmp(pi_span_kind_name(calls[i].kind), kind) == 0;
        cr_assert(found, "a slice %s at %.0f on %u is a call made", name, ts, tid);
        slices++;
    }
    cr_assert_eq(slices, call_count, "%zu slices for %zu calls", slices, call_count);
    cJSON_Delete(root);
    free(text);
    pi_analysis_free(&a);
}
