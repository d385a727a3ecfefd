/*
 * spans.c - the calls of marked Python functions, by name and kind (see
 * spans.h).
 *
 * String ids are per file and a name is known for sure only once the file
 * is read (its definition may come in a later frame than a call), so a row
 * is found by (string id, kind) while the file is read and named at its
 * end, where rows whose ids read the same (names lost to a full string
 * table: "?") become one. Threads are counted by the (row, thread) pairs
 * seen, recounted after such a merge so that a thread counts once a row.
 */
#include "spans.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"

const double pi_span_quantile_levels[PI_SPAN_QUANTILE_COUNT] = {0.50, 0.90, 0.95,
                                                                0.99, 0.999, 1.0};

struct pi_span_lookup {
    struct pi_u64_map *rows;    /* (kind + 1) << 32 | string id -> row index + 1 */
    struct pi_u64_map *callers; /* (row index + 1) << 32 | tid: a thread seen calling a row */
    uint32_t *name_ids;         /* each row's string id */
    size_t name_capacity;
};

const char *pi_span_kind_name(unsigned kind)
{
    static const char *const names[PI_SPAN_KIND_COUNT] = {
        [PI_SPAN_NAMED] = "named",
        [PI_SPAN_OPTIMIZER_STEP] = "optimizer_step",
        [PI_SPAN_BACKWARD] = "backward",
        [PI_SPAN_DATALOADER_NEXT] = "dataloader_next",
        [PI_SPAN_MODULE] = "module",
        [PI_SPAN_PIPELINE] = "pipeline",
        [PI_SPAN_GENERATE] = "generate",
        [PI_SPAN_TOKENIZER] = "tokenizer",
        [PI_SPAN_FROM_PRETRAINED] = "from_pretrained",
        [PI_SPAN_COMPILE] = "compile",
        [PI_SPAN_GC] = "gc",
        [PI_SPAN_TOKEN] = "token",
    };
    return kind < PI_SPAN_KIND_COUNT && names[kind] ? names[kind] : "unknown";
}

double pi_spans_mean_ns(const struct pi_span_row *row)
{
    return row->count ? (double)row->total_ns / (double)row->count : 0.0;
}

static struct pi_spans *spans_of(struct pi_process_info *p)
{
    if (p->spans)
        return p->spans;
    struct pi_spans *s = calloc(1, sizeof(*s));
    struct pi_span_lookup *l = s ? calloc(1, sizeof(*l)) : NULL;
    if (l && (l->rows = pi_u64_map_new()) && (l->callers = pi_u64_map_new())) {
        s->lookup = l;
        return p->spans = s;
    }
    if (l)
        pi_u64_map_free(l->rows);
    free(l);
    free(s);
    return NULL;
}

/* The row of @name_id and @kind, made on its first call; NULL past PI_SPAN_ROWS_MAX. */
static struct pi_span_row *row_of(struct pi_spans *s, uint32_t name_id, unsigned kind, int exact,
                                  size_t *index)
{
    struct pi_span_lookup *l = s->lookup;
    struct pi_u64_entry *e = pi_u64_map_put(l->rows, (uint64_t)(kind + 1) << 32 | name_id);
    if (!e)
        return NULL;
    if (e->value[0]) {
        *index = e->value[0] - 1;
        return &s->rows[*index];
    }
    struct pi_histogram *durations = NULL;
    if (s->count >= PI_SPAN_ROWS_MAX ||
        pi_array_room(&s->rows, &s->capacity, s->count, sizeof(*s->rows), 16) != 0 ||
        pi_array_room(&l->name_ids, &l->name_capacity, s->count, sizeof(*l->name_ids), 16) != 0 ||
        !(durations = malloc(sizeof(*durations)))) {
        pi_u64_map_remove(l->rows, (uint64_t)(kind + 1) << 32 | name_id);
        return NULL;
    }
    pi_histogram_init(durations, exact);
    *index = s->count;
    e->value[0] = ++s->count;
    l->name_ids[*index] = name_id;
    struct pi_span_row *row = &s->rows[*index];
    memset(row, 0, sizeof(*row));
    row->kind = kind;
    row->durations = durations;
    return row;
}

/* @tid made a call of @row (at @index): a thread more for it the first time. */
static void count_thread(struct pi_spans *s, struct pi_span_row *row, size_t index, uint32_t tid)
{
    struct pi_u64_entry *caller = pi_u64_map_put(s->lookup->callers, (uint64_t)(index + 1) << 32 | tid);
    if (caller && !caller->value[0]) {
        caller->value[0] = 1;
        row->threads++;
    }
}

void pi_spans_event(struct pi_process_info *p, const struct pi_event *ev, int exact)
{
    const struct pi_record *r = &ev->rec;
    struct pi_spans *s = spans_of(p);
    if (!s)
        return;
    size_t index;
    struct pi_span_row *row = row_of(s, PI_SPAN_NAME(r->arg[0]), PI_SPAN_KIND(r->arg[0]), exact,
                                     &index);
    if (!row) {
        s->unlisted_calls++;
        return;
    }
    row->count++;
    row->total_ns += ev->dur_ns;
    if (r->arg[1] != PI_SPAN_CPU_UNMEASURED) {
        row->cpu_ns += r->arg[1];
        row->cpu_calls++;
    }
    /* wraps as the recorder's own unsigned difference did (a trace may hold any value) */
    row->device_bytes = (int64_t)((uint64_t)row->device_bytes + r->arg[2]);
    row->raised += (r->arg[0] & PI_SPAN_RAISED) != 0;
    pi_histogram_add(row->durations, ev->dur_ns);
    count_thread(s, row, index, r->tid);
}

void pi_spans_host_memory(struct pi_process_info *p, const struct pi_event *ev, int exact)
{
    const struct pi_record *r = &ev->rec;
    struct pi_spans *s = spans_of(p);
    size_t index;
    struct pi_span_row *row =
        s ? row_of(s, PI_SPAN_NAME(r->arg[0]), PI_SPAN_KIND(r->arg[0]), exact, &index) : NULL;
    if (!row)
        return; /* its call is counted apart (unlisted) as its span record comes */
    /* wraps as the recorder's own unsigned difference did */
    row->host_bytes = (int64_t)((uint64_t)row->host_bytes + r->arg[1]);
    row->host_calls++;
}

void pi_spans_note(struct pi_process_info *p, const struct pi_event *ev)
{
    struct pi_spans *s = spans_of(p);
    if (!s)
        return;
    if (s->note_count == PI_SPAN_NOTES_MAX ||
        (!s->notes && !(s->notes = calloc(PI_SPAN_NOTES_MAX, sizeof(*s->notes))))) {
        s->notes_unkept++;
        return;
    }
    const struct pi_record *r = &ev->rec;
    s->notes[s->note_count++] = (struct pi_span_note){ev->ts_ns, PI_SPAN_KIND(r->arg[0]),
                                                      PI_SPAN_NAME(r->arg[0]),
                                                      (uint32_t)r->arg[1], NULL, NULL};
}

/* The notes' words and their calls' names, while the file's strings are known. */
static void name_notes(struct pi_spans *s, const struct pi_reader *reader)
{
    for (size_t i = 0; i < s->note_count; i++) {
        struct pi_span_note *n = &s->notes[i];
        if (n->name)
            continue; /* a file before this one's */
        const char *name = pi_reader_string(reader, n->name_id);
        const char *text = pi_reader_string(reader, n->text_id);
        n->name = strdup(name ? name : "?");
        n->text = strdup(text ? text : "?");
    }
}

void pi_spans_summary(struct pi_process_info *p, uint32_t tid, const struct pi_summary *summary,
                      int exact)
{
    struct pi_spans *s = spans_of(p);
    if (!s)
        return;
    size_t index;
    uint64_t key = summary->body.key[0];
    struct pi_span_row *row = row_of(s, PI_SPAN_NAME(key), PI_SPAN_KIND(key), exact, &index);
    if (!row) {
        s->unlisted_calls += summary->count;
        return;
    }
    row->count += summary->count;
    row->total_ns += summary->body.total_ns;
    for (uint32_t i = 0; i < summary->body.bucket_count; i++)
        pi_histogram_add_buckets(row->durations, PI_SUMMARY_BUCKET_INDEX(summary->buckets[i]),
                                 PI_SUMMARY_BUCKET_COUNT(summary->buckets[i]));
    pi_histogram_add_extent(row->durations, summary->body.total_ns, summary->body.min_ns,
                            summary->body.max_ns);
    count_thread(s, row, index, tid);
}

/* Add @from's calls into @into, a row of the same name and kind (threads are recounted). */
static void merge_row(struct pi_span_row *into, struct pi_span_row *from)
{
    into->count += from->count;
    into->total_ns += from->total_ns;
    into->cpu_ns += from->cpu_ns;
    into->cpu_calls += from->cpu_calls;
    into->device_bytes = (int64_t)((uint64_t)into->device_bytes + (uint64_t)from->device_bytes);
    into->host_bytes = (int64_t)((uint64_t)into->host_bytes + (uint64_t)from->host_bytes);
    into->host_calls += from->host_calls;
    into->raised += from->raised;
    pi_histogram_merge(into->durations, from->durations);
}

/* The threads of each row, counted once a row after rows merged into @target. */
static void recount_threads(struct pi_spans *s, const size_t *target)
{
    struct pi_u64_map *pairs = pi_u64_map_new();
    if (!pairs)
        return; /* the counts before the merge stay: at most a thread too many */
    for (size_t i = 0; i < s->count; i++)
        s->rows[i].threads = 0;
    const struct pi_u64_map *callers = s->lookup->callers;
    for (size_t i = 0; i < callers->capacity; i++) {
        uint64_t key = callers->slots[i].key;
        if (!key)
            continue;
        size_t row = target[(key >> 32) - 1];
        struct pi_u64_entry *e = pi_u64_map_put(pairs, (uint64_t)(row + 1) << 32 | (uint32_t)key);
        if (e && !e->value[0]) {
            e->value[0] = 1;
            s->rows[row].threads++;
        }
    }
    pi_u64_map_free(pairs);
}

void pi_spans_finish_file(struct pi_process_info *p, const struct pi_reader *reader)
{
    struct pi_spans *s = p->spans;
    if (!s || !s->lookup)
        return;
    struct pi_span_lookup *l = s->lookup;
    name_notes(s, reader);
    size_t *target = malloc((s->count + 1) * sizeof(*target));
    size_t kept = 0, merged = 0;
    for (size_t i = 0; i < s->count; i++) {
        struct pi_span_row *row = &s->rows[i];
        const char *name = pi_reader_string(reader, l->name_ids[i]);
        row->name = strdup(name ? name : "?");
        size_t into = i;
        for (size_t k = 0; target && row->name && k < i && into == i; k++)
            if (s->rows[k].name && s->rows[k].kind == row->kind &&
                strcmp(s->rows[k].name, row->name) == 0)
                into = target[k];
        if (target)
            target[i] = into;
        if (into != i) {
            merge_row(&s->rows[into], row);
            merged++;
        }
    }
    if (merged && target)
        recount_threads(s, target);
    /* the merged rows go; each one's index in target is no longer needed */
    for (size_t i = 0; i < s->count; i++) {
        struct pi_span_row *row = &s->rows[i];
        if (target && target[i] != i) {
            free(row->name);
            pi_histogram_free(row->durations);
            free(row->durations);
            continue;
        }
        for (int q = 0; q < PI_SPAN_QUANTILE_COUNT; q++)
            row->quantile_ns[q] = pi_histogram_quantile(row->durations, pi_span_quantile_levels[q]);
        pi_histogram_free(row->durations);
        free(row->durations);
        row->durations = NULL;
        s->rows[kept++] = *row;
    }
    s->count = kept;
    free(target);
    pi_u64_map_free(l->rows);
    pi_u64_map_free(l->callers);
    free(l->name_ids);
    free(l);
    s->lookup = NULL;
}

void pi_spans_free(struct pi_process_info *p)
{
    struct pi_spans *s = p->spans;
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++) {
        free(s->rows[i].name);
        if (s->rows[i].durations)
            pi_histogram_free(s->rows[i].durations);
        free(s->rows[i].durations);
    }
    if (s->lookup) {
        pi_u64_map_free(s->lookup->rows);
        pi_u64_map_free(s->lookup->callers);
        free(s->lookup->name_ids);
        free(s->lookup);
    }
    for (size_t i = 0; i < s->note_count; i++) {
        free(s->notes[i].name);
        free(s->notes[i].text);
    }
    free(s->notes);
    free(s->rows);
    free(s->steps_name);
    free(s);
    p->spans = NULL;
}
