/*
 * requests.c - the requests a process served (see requests.h).
 *
 * Which outermost calls are the requests is known only once the file is
 * read (a process that steps an optimizer at its end serves none; the kind
 * chosen depends on them all), so each name and kind of outermost call
 * that may serve keeps the figures of its calls as they come, a candidate;
 * at the end the requests are one of them, and the others are let go. A
 * name is known for sure only at the end too (its definition may come in a
 * later frame than a call), so a candidate is found by string id while the
 * file is read, and candidates whose ids read the same merge at its end.
 */
#include "requests.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"
#include "analysis/host/request_calls.h"
#include "analysis/host/span_steps.h"

const double pi_request_quantile_levels[PI_REQUEST_QUANTILE_COUNT] = {0.50, 0.90, 0.95,
                                                                      0.99, 0.999, 1.0};

/* Names and kinds of outermost calls followed at once; the calls of others are not. */
#define CANDIDATES_MAX 64

/* The outermost calls of one name and kind, as the requests they may be. */
struct candidate {
    uint32_t name_id;
    unsigned kind;
    size_t into; /* at the end: the candidate of the same name it merged into (itself) */
    uint64_t count, first_start, last_end, cpu_ns, cpu_calls, sync_ns, gc_between_ns;
    uint64_t part_ns[PI_REQUEST_PART_COUNT];
    struct pi_histogram latency, parts[PI_REQUEST_PART_COUNT];
    struct pi_request_slow slowest[PI_REQUEST_SLOWEST];
    unsigned slowest_count;
    struct {
        uint64_t calls, tokens, total_ns, prefill_ns, decode_ns, requests;
        struct pi_histogram first_token, inter_token, tokens_each;
    } generate;
};

struct pi_request_pass {
    int exact;
    int training; /* an optimizer step or a backward call came: no request is served */
    uint64_t outermost; /* outermost calls of the kinds that serve */
    struct pi_request_threads *threads;
    struct candidate *candidates;
    size_t count, capacity;
    struct pi_u64_map *servers; /* (candidate + 1) << 32 | tid: a thread that made its calls */
};

/* The kinds whose outermost calls may be requests, the first chosen first (0: none). */
static int serving_rank(unsigned kind)
{
    switch (kind) {
    case PI_SPAN_PIPELINE:
        return 4;
    case PI_SPAN_GENERATE:
        return 3;
    case PI_SPAN_NAMED:
        return 2;
    case PI_SPAN_MODULE:
        return 1;
    default:
        return 0;
    }
}

static void candidate_free(struct candidate *c)
{
    pi_histogram_free(&c->latency);
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++)
        pi_histogram_free(&c->parts[k]);
    pi_histogram_free(&c->generate.first_token);
    pi_histogram_free(&c->generate.inter_token);
    pi_histogram_free(&c->generate.tokens_each);
}

/* Let go of every call followed: once the process trains, none serves. */
static void forget_calls(struct pi_request_pass *s)
{
    for (size_t i = 0; i < s->count; i++)
        candidate_free(&s->candidates[i]);
    free(s->candidates);
    s->candidates = NULL;
    s->count = s->capacity = 0;
    pi_request_threads_free(s->threads);
    s->threads = NULL;
    pi_u64_map_free(s->servers);
    s->servers = NULL;
}

static void pass_free(struct pi_request_pass *s)
{
    if (!s)
        return;
    forget_calls(s);
    free(s);
}

static struct pi_request_pass *pass_of(struct pi_process_info *p, int exact)
{
    if (p->requests)
        return p->requests->pass;
    struct pi_requests *q = calloc(1, sizeof(*q));
    struct pi_request_pass *s = q ? calloc(1, sizeof(*s)) : NULL;
    if (s && (s->threads = pi_request_threads_new(exact)) && (s->servers = pi_u64_map_new())) {
        s->exact = exact;
        q->pass = s;
        p->requests = q;
        return s;
    }
    pass_free(s);
    free(q);
    return NULL;
}

static struct candidate *candidate_of(struct pi_request_pass *s, uint32_t name_id, unsigned kind)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->candidates[i].name_id == name_id && s->candidates[i].kind == kind)
            return &s->candidates[i];
    if (s->count == CANDIDATES_MAX ||
        pi_array_room(&s->candidates, &s->capacity, s->count, sizeof(*s->candidates), 4) != 0)
        return NULL;
    struct candidate *c = &s->candidates[s->count++];
    memset(c, 0, sizeof(*c));
    c->name_id = name_id;
    c->kind = kind;
    c->first_start = UINT64_MAX;
    pi_histogram_init(&c->latency, s->exact);
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++)
        pi_histogram_init(&c->parts[k], s->exact);
    pi_histogram_init(&c->generate.first_token, s->exact);
    pi_histogram_init(&c->generate.inter_token, s->exact);
    pi_histogram_init(&c->generate.tokens_each, s->exact);
    return c;
}

/* @r among @c's slowest requests, if it is one of them (the earlier first among equals). */
static void keep_if_slow(struct candidate *c, const struct pi_request_slow *r)
{
    unsigned n = c->slowest_count;
    if (n == PI_REQUEST_SLOWEST && r->dur_ns <= c->slowest[n - 1].dur_ns)
        return;
    unsigned at = n < PI_REQUEST_SLOWEST ? n : PI_REQUEST_SLOWEST - 1;
    for (; at > 0 && c->slowest[at - 1].dur_ns < r->dur_ns; at--)
        c->slowest[at] = c->slowest[at - 1];
    c->slowest[at] = *r;
    if (n < PI_REQUEST_SLOWEST)
        c->slowest_count++;
}

static void add_generates(struct candidate *c, const struct pi_request_generates *g)
{
    c->generate.requests++;
    c->generate.calls += g->calls;
    c->generate.tokens += g->tokens;
    c->generate.total_ns += g->total_ns;
    c->generate.prefill_ns += g->prefill_ns;
    c->generate.decode_ns += g->decode_ns;
    pi_histogram_merge(&c->generate.first_token, &g->first_token);
    pi_histogram_merge(&c->generate.inter_token, &g->inter_token);
    pi_histogram_add(&c->generate.tokens_each, g->tokens);
}

static void add_request(struct pi_request_pass *s, struct candidate *c,
                        const struct pi_request_call *call)
{
    uint64_t dur = call->end - call->start;
    struct pi_request_slow r = {call->start, dur, call->tid, {0}, 0, 0, -1};
    r.part_ns[PI_REQUEST_TOKENIZING] = call->tokenizing_ns;
    r.part_ns[PI_REQUEST_MODEL] = call->model_ns;
    r.part_ns[PI_REQUEST_OTHER] = dur - call->tokenizing_ns - call->model_ns;
    r.part_ns[PI_REQUEST_WAITING] = call->waiting_ns < dur ? call->waiting_ns : dur;
    r.part_ns[PI_REQUEST_COLLECTING] = call->gc_ns;
    c->count++;
    if (call->start < c->first_start)
        c->first_start = call->start;
    if (call->end > c->last_end)
        c->last_end = call->end;
    c->cpu_ns += call->cpu_ns;
    c->cpu_calls += call->cpu_measured;
    c->sync_ns += call->sync_ns < dur ? call->sync_ns : dur;
    if (call->previous_known && call->previous_name == call->name &&
        call->previous_kind == call->kind)
        c->gc_between_ns += call->gc_before_ns; /* after its thread's previous request */
    pi_histogram_add(&c->latency, dur);
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++) {
        c->part_ns[k] += r.part_ns[k];
        pi_histogram_add(&c->parts[k], r.part_ns[k]);
    }
    if (call->generates) {
        add_generates(c, call->generates);
        r.tokens = call->generates->tokens;
        r.first_token_ns = call->generates->first_token_ns;
    }
    keep_if_slow(c, &r);
    struct pi_u64_entry *e =
        pi_u64_map_put(s->servers, (uint64_t)(c - s->candidates + 1) << 32 | call->tid);
    if (e)
        e->value[0] = 1;
}

void pi_requests_span(struct pi_process_info *p, const struct pi_event *ev, int exact)
{
    struct pi_request_pass *s = pass_of(p, exact);
    if (!s || s->training)
        return;
    unsigned kind = PI_SPAN_KIND(ev->rec.arg[0]);
    if (kind == PI_SPAN_OPTIMIZER_STEP || kind == PI_SPAN_BACKWARD) {
        s->training = 1;
        forget_calls(s);
        return;
    }
    struct pi_request_call call;
    if (!pi_request_threads_span(s->threads, ev, &call) || !serving_rank(call.kind))
        return;
    s->outermost++;
    struct candidate *c = candidate_of(s, call.name, call.kind);
    if (c)
        add_request(s, c, &call);
}

void pi_requests_wait(struct pi_process_info *p, uint32_t tid, uint64_t ts, uint64_t dur,
                      unsigned time_class, int exact)
{
    struct pi_request_pass *s = pass_of(p, exact);
    if (s && !s->training && tid)
        pi_request_threads_wait(s->threads, tid, ts, dur, time_class == PI_TIME_SYNC);
}

/* @from's calls into @into, a candidate of the same name and kind. */
static void merge(struct candidate *into, struct candidate *from)
{
    into->count += from->count;
    if (from->first_start < into->first_start)
        into->first_start = from->first_start;
    if (from->last_end > into->last_end)
        into->last_end = from->last_end;
    into->cpu_ns += from->cpu_ns;
    into->cpu_calls += from->cpu_calls;
    into->sync_ns += from->sync_ns;
    into->gc_between_ns += from->gc_between_ns;
    pi_histogram_merge(&into->latency, &from->latency);
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++) {
        into->part_ns[k] += from->part_ns[k];
        pi_histogram_merge(&into->parts[k], &from->parts[k]);
    }
    for (unsigned i = 0; i < from->slowest_count; i++)
        keep_if_slow(into, &from->slowest[i]);
    into->generate.calls += from->generate.calls;
    into->generate.tokens += from->generate.tokens;
    into->generate.total_ns += from->generate.total_ns;
    into->generate.prefill_ns += from->generate.prefill_ns;
    into->generate.decode_ns += from->generate.decode_ns;
    into->generate.requests += from->generate.requests;
    pi_histogram_merge(&into->generate.first_token, &from->generate.first_token);
    pi_histogram_merge(&into->generate.inter_token, &from->generate.inter_token);
    pi_histogram_merge(&into->generate.tokens_each, &from->generate.tokens_each);
}

static const char *name_of(const struct pi_reader *reader, uint32_t id)
{
    const char *name = reader ? pi_reader_string(reader, id) : NULL;
    return name ? name : "?";
}

/* Merge the candidates whose names read the same; the requests: the one of the kind chosen
 * first, then of the most calls (the first on a tie). */
static struct candidate *choose(struct pi_request_pass *s, const struct pi_reader *reader)
{
    struct candidate *best = NULL;
    for (size_t i = 0; i < s->count; i++) {
        struct candidate *c = &s->candidates[i];
        c->into = i;
        for (size_t k = 0; k < i && c->into == i; k++) {
            struct candidate *other = &s->candidates[k];
            if (other->into == k && other->kind == c->kind &&
                strcmp(name_of(reader, other->name_id), name_of(reader, c->name_id)) == 0)
                c->into = k;
        }
        if (c->into != i)
            merge(&s->candidates[c->into], c);
    }
    for (size_t i = 0; i < s->count; i++) {
        struct candidate *c = &s->candidates[i];
        if (c->into != i)
            continue;
        int rank = serving_rank(c->kind), best_rank = best ? serving_rank(best->kind) : 0;
        if (!best || rank > best_rank || (rank == best_rank && c->count > best->count))
            best = c;
    }
    return best;
}

/* The threads that made the calls of @chosen or of those merged into it: their number, the
 * first ones' ids in @q. */
static uint64_t threads_of(struct pi_requests *q, const struct pi_request_pass *s, size_t chosen)
{
    struct pi_u64_map *seen = pi_u64_map_new();
    uint64_t threads = 0;
    for (size_t i = 0; seen && i < s->servers->capacity; i++) {
        uint64_t key = s->servers->slots[i].key;
        if (!key || s->candidates[(key >> 32) - 1].into != chosen)
            continue;
        struct pi_u64_entry *e = pi_u64_map_put(seen, (uint64_t)(uint32_t)key + 1);
        if (e && !e->value[0]) {
            e->value[0] = 1;
            threads++;
            if (q->tid_count < PI_REQUEST_TIDS_KEPT)
                q->tids[q->tid_count++] = (uint32_t)key;
        }
    }
    pi_u64_map_free(seen);
    return threads;
}

static void quantiles_of(struct pi_histogram *h, struct pi_request_quantiles *q)
{
    q->count = h->count;
    q->total_ns = h->sum;
    for (int i = 0; i < PI_REQUEST_QUANTILE_COUNT; i++)
        q->ns[i] = pi_histogram_quantile(h, pi_request_quantile_levels[i]);
}

/* The part of @r that took most longer than the median request's, -1 when none did. Waiting
 * and collecting happen inside the other parts: one of them that explains at least half of
 * that part's excess is named instead, the cause inside it. */
static int slow_part_of(const struct pi_requests *q, const struct pi_request_slow *r)
{
    int part = -1, inside = -1;
    double most = 0, most_inside = 0;
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++) {
        double over = (double)r->part_ns[k] - q->part_p50_ns[k];
        if (over > most) {
            most = over;
            part = k;
        }
        if ((k == PI_REQUEST_WAITING || k == PI_REQUEST_COLLECTING) && over > most_inside) {
            most_inside = over;
            inside = k;
        }
    }
    return inside >= 0 && most_inside >= most / 2 ? inside : part;
}

/* @q's figures from the candidate chosen. */
static int keep_figures(struct pi_requests *q, struct pi_request_pass *s, struct candidate *c,
                        const struct pi_reader *reader)
{
    if (!(q->name = strdup(name_of(reader, c->name_id))))
        return -1;
    q->kind = c->kind;
    q->first_start_ns = c->first_start;
    q->last_end_ns = c->last_end;
    q->threads = threads_of(q, s, (size_t)(c - s->candidates));
    quantiles_of(&c->latency, &q->latency);
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++) {
        q->part_ns[k] = c->part_ns[k];
        q->part_p50_ns[k] = pi_histogram_quantile(&c->parts[k], 0.5);
    }
    q->sync_ns = c->sync_ns;
    q->gc_between_ns = c->gc_between_ns;
    q->cpu_ns = c->cpu_ns;
    q->cpu_calls = c->cpu_calls;
    q->slowest_count = c->slowest_count;
    for (unsigned i = 0; i < c->slowest_count; i++) {
        q->slowest[i] = c->slowest[i];
        q->slowest[i].slow_part = slow_part_of(q, &c->slowest[i]);
    }
    struct pi_request_generate *g = &q->generate;
    g->calls = c->generate.calls;
    g->tokens = c->generate.tokens;
    g->total_ns = c->generate.total_ns;
    g->prefill_ns = c->generate.prefill_ns;
    g->decode_ns = c->generate.decode_ns;
    g->requests = c->generate.requests;
    g->tokens_p50 = pi_histogram_quantile(&c->generate.tokens_each, 0.5);
    quantiles_of(&c->generate.first_token, &g->first_token);
    quantiles_of(&c->generate.inter_token, &g->inter_token);
    return 0;
}

void pi_requests_finish_file(struct pi_process_info *p, const struct pi_reader *reader)
{
    struct pi_requests *q = p->requests;
    if (!q || !q->pass)
        return;
    struct pi_request_pass *s = q->pass;
    struct candidate *chosen = !s->training && s->outermost >= 2 ? choose(s, reader) : NULL;
    /* a model called on each batch of a DataLoader is a batch loop's steps, not requests */
    if (chosen && chosen->kind == PI_SPAN_MODULE && pi_steps_by_batches(p))
        chosen = NULL;
    int kept = chosen && keep_figures(q, s, chosen, reader) == 0;
    pass_free(s);
    q->pass = NULL;
    if (!kept)
        pi_requests_free(p);
}

int pi_requests_served_by(const struct pi_requests *q, uint32_t tid)
{
    for (unsigned i = 0; q && i < q->tid_count; i++)
        if (q->tids[i] == tid)
            return 1;
    return 0;
}

double pi_requests_per_s(const struct pi_requests *q)
{
    uint64_t span = q->last_end_ns > q->first_start_ns ? q->last_end_ns - q->first_start_ns : 0;
    return span ? (double)q->latency.count * 1e9 / (double)span : 0;
}

double pi_requests_tokens_per_s(const struct pi_requests *q)
{
    const struct pi_request_generate *g = &q->generate;
    return g->total_ns ? (double)g->tokens * 1e9 / (double)g->total_ns : 0;
}

double pi_requests_prefill_share(const struct pi_requests *q)
{
    const struct pi_request_generate *g = &q->generate;
    uint64_t model = g->prefill_ns + g->decode_ns;
    return model ? (double)g->prefill_ns / (double)model : -1;
}

uint64_t pi_requests_outside_model_ns(const struct pi_requests *q)
{
    const struct pi_request_generate *g = &q->generate;
    uint64_t model = g->prefill_ns + g->decode_ns;
    return g->total_ns > model ? g->total_ns - model : 0;
}

void pi_requests_free(struct pi_process_info *p)
{
    struct pi_requests *q = p->requests;
    if (!q)
        return;
    pass_free(q->pass);
    free(q->name);
    free(q);
    p->requests = NULL;
}
