/*
 * request_calls.c - what each thread did inside its outermost marked calls
 * (see request_calls.h).
 *
 * Waits: a thread's recorded waits since its last outermost return are
 * those of the next outermost call and those before it began (a server
 * thread waiting for its next request). Which is which is known only when
 * the call returns, with its entry, so the thread keeps, for its waits in
 * order, where each began and the waits' total before it; an outermost
 * call's waits are the total less the total before its first wait that
 * began inside it. Past WAIT_MARKS waits every other mark goes and then
 * only every second wait is marked (and so on): exact up to WAIT_MARKS
 * waits between two returns, past them the few waits between the last mark
 * before the call's entry and the first after it are counted as before it.
 */
#include "request_calls.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"
#include "analysis/host/held_call.h"

#define WAIT_MARKS 64

/* The module calls a thread made at one depth since its last outermost return or the last
 * call around them: a generate()'s forward passes, one a token. */
struct module_run {
    unsigned depth;
    uint64_t count, first_start, first_end, first_ns, last_end, total_ns;
    struct pi_histogram gaps; /* between successive returns */
};

/* Where the thread's waits since its last outermost return began, and their totals before. */
struct wait_marks {
    uint64_t total_ns, sync_ns;
    struct wait_mark {
        uint64_t start, total_before, sync_before;
    } at[WAIT_MARKS];
    unsigned count;
    uint64_t stride, seen; /* every stride-th wait is marked; seen: waits so far */
};

struct thread_calls {
    uint32_t tid;
    int ended; /* its latest record was an outermost call's return: what comes is new */
    struct pi_held_call tokenizer;
    uint64_t tokenizing_ns, model_ns;
    struct module_run run;
    /* the stopping checks a generate() makes as each token comes (PI_SPAN_TOKEN), as a run
     * of calls of no length at their returns: the moments the tokens go to a streamer */
    struct module_run tokens;
    struct pi_request_generates generates;
    struct wait_marks waits;
    uint64_t gc_ns;      /* collections inside the coming outermost call */
    uint64_t gc_idle_ns; /* collections outside any call since the last outermost return */
    uint32_t previous_name; /* that call's */
    unsigned previous_kind;
    int previous_known;
};

struct pi_request_threads {
    int exact;
    struct thread_calls *threads;
    size_t count, capacity, last; /* last: the thread found last (records come in runs) */
    struct pi_u64_map *by_tid;    /* tid -> index + 1 */
};

struct pi_request_threads *pi_request_threads_new(int exact)
{
    struct pi_request_threads *s = calloc(1, sizeof(*s));
    if (s && !(s->by_tid = pi_u64_map_new())) {
        free(s);
        return NULL;
    }
    if (s)
        s->exact = exact;
    return s;
}

void pi_request_threads_free(struct pi_request_threads *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++) {
        pi_histogram_free(&s->threads[i].run.gaps);
        pi_histogram_free(&s->threads[i].tokens.gaps);
        pi_histogram_free(&s->threads[i].generates.first_token);
        pi_histogram_free(&s->threads[i].generates.inter_token);
    }
    free(s->threads);
    pi_u64_map_free(s->by_tid);
    free(s);
}

static void run_clear(struct module_run *m)
{
    struct pi_histogram gaps = m->gaps;
    pi_histogram_clear(&gaps);
    memset(m, 0, sizeof(*m));
    m->gaps = gaps;
}

static void waits_clear(struct wait_marks *w)
{
    w->total_ns = w->sync_ns = w->seen = 0;
    w->count = 0;
    w->stride = 1;
}

/* What came before the thread's last outermost return is that call's: forget it. */
static void begin_anew(struct thread_calls *t)
{
    struct pi_request_generates *g = &t->generates;
    t->ended = 0;
    t->tokenizer.held = 0;
    t->tokenizing_ns = t->model_ns = t->gc_ns = 0;
    run_clear(&t->run);
    run_clear(&t->tokens);
    pi_histogram_clear(&g->first_token);
    pi_histogram_clear(&g->inter_token);
    g->calls = g->tokens = g->total_ns = g->prefill_ns = g->decode_ns = 0;
    g->first_token_ns = g->held_start = g->held_ns = g->held_first_end = 0;
    g->first_token_known = g->held = 0;
    waits_clear(&t->waits);
}

static struct thread_calls *thread_of(struct pi_request_threads *s, uint32_t tid)
{
    struct pi_u64_entry *e = NULL;
    if (s->last >= s->count || s->threads[s->last].tid != tid) {
        if (!(e = pi_u64_map_put(s->by_tid, (uint64_t)tid + 1)))
            return NULL;
    }
    if (e && !e->value[0]) {
        if (pi_array_room(&s->threads, &s->capacity, s->count, sizeof(*s->threads), 8) != 0) {
            pi_u64_map_remove(s->by_tid, (uint64_t)tid + 1);
            return NULL;
        }
        struct thread_calls *t = &s->threads[s->count];
        memset(t, 0, sizeof(*t));
        t->tid = tid;
        pi_histogram_init(&t->run.gaps, s->exact);
        pi_histogram_init(&t->tokens.gaps, s->exact);
        pi_histogram_init(&t->generates.first_token, s->exact);
        pi_histogram_init(&t->generates.inter_token, s->exact);
        waits_clear(&t->waits);
        e->value[0] = ++s->count;
    }
    if (e)
        s->last = e->value[0] - 1;
    struct thread_calls *t = &s->threads[s->last];
    if (t->ended)
        begin_anew(t);
    return t;
}

/* A tokenizer call inside an outermost one; one around the one held (a processor calling
 * its tokenizer) takes its place, else the one held was not inside another and counts. */
static void tokenizer_call(struct thread_calls *t, uint64_t start, uint64_t end)
{
    struct pi_held_call c = {.start = start, .end = end, .held = 1}, placed;
    if (pi_held_call_take(&t->tokenizer, &c, &placed))
        t->tokenizing_ns += placed.end - placed.start;
}

/* A module call inside an outermost one: the model's time, and maybe a token of a generate(). */
static void module_call(struct thread_calls *t, uint64_t start, uint64_t end, unsigned depth)
{
    struct module_run *m = &t->run;
    t->model_ns += end - start;
    if (m->count && m->depth != depth)
        run_clear(m); /* not the forward passes of one generate() */
    if (!m->count) {
        m->depth = depth;
        m->first_start = start;
        m->first_end = end;
        m->first_ns = end - start;
    } else {
        pi_histogram_add(&m->gaps, end > m->last_end ? end - m->last_end : 0);
    }
    m->last_end = end;
    m->total_ns += end - start;
    m->count++;
}

/* A stopping check inside an outermost call: a token of a generate(), handed to its streamer
 * as the check returns (@at). */
static void token_check(struct thread_calls *t, uint64_t at, unsigned depth)
{
    struct module_run *m = &t->tokens;
    if (m->count && m->depth != depth)
        run_clear(m);
    if (!m->count) {
        m->depth = depth;
        m->first_start = m->first_end = at;
    } else {
        pi_histogram_add(&m->gaps, at > m->last_end ? at - m->last_end : 0);
    }
    m->last_end = at;
    m->count++;
}

/* The generate() held was wrapped by none: its time and its time to first token count, from
 * the entry of the outermost one that wrapped it (what the caller waited for). */
static void generate_placed(struct pi_request_generates *g)
{
    if (!g->held)
        return;
    g->held = 0;
    g->total_ns += g->held_ns;
    if (!g->held_first_end)
        return;
    uint64_t first_token = g->held_first_end - g->held_start;
    pi_histogram_add(&g->first_token, first_token);
    if (!g->first_token_known) {
        g->first_token_ns = first_token;
        g->first_token_known = 1;
    }
}

/* A generate() call: the module calls directly inside it are its tokens; one around the one
 * held (a PEFT model's generate() calling its base model's) counts once. */
static void generate_call(struct thread_calls *t, uint64_t start, uint64_t end, unsigned depth)
{
    struct pi_request_generates *g = &t->generates;
    struct module_run *m = &t->run;
    if (g->held && start <= g->held_start) {
        g->held_start = start;
        g->held_ns = end - start;
        run_clear(m);
        return;
    }
    generate_placed(g);
    g->calls++;
    g->held = 1;
    g->held_start = start;
    g->held_ns = end - start;
    g->held_first_end = 0;
    struct module_run *k = &t->tokens;
    if (k->count && k->depth == depth + 1 && k->first_start >= start) {
        /* its stopping checks: the moment each token was there, as its streamer sees it */
        g->tokens += k->count;
        pi_histogram_merge(&g->inter_token, &k->gaps);
        g->held_first_end = k->first_start;
    }
    if (m->count && m->depth == depth + 1 && m->first_start >= start) {
        /* else its forward passes, one a token, each there when its pass returned */
        if (!g->held_first_end) {
            g->tokens += m->count;
            pi_histogram_merge(&g->inter_token, &m->gaps);
            g->held_first_end = m->first_end;
        }
        g->prefill_ns += m->first_ns;
        g->decode_ns += m->total_ns - m->first_ns;
    }
    run_clear(m);
    run_clear(k);
}

/* The waits of @w that began at @start or after: those of the call that began there. */
static void waits_since(const struct wait_marks *w, uint64_t start, uint64_t *total,
                        uint64_t *sync)
{
    *total = *sync = 0;
    for (unsigned i = 0; i < w->count; i++)
        if (w->at[i].start >= start) {
            *total = w->total_ns - w->at[i].total_before;
            *sync = w->sync_ns - w->at[i].sync_before;
            return;
        }
}

int pi_request_threads_span(struct pi_request_threads *s, const struct pi_event *ev,
                            struct pi_request_call *call)
{
    const struct pi_record *r = &ev->rec;
    unsigned kind = PI_SPAN_KIND(r->arg[0]), depth = PI_SPAN_DEPTH(r->arg[0]);
    struct thread_calls *t = r->tid ? thread_of(s, r->tid) : NULL;
    if (!t)
        return 0;
    uint64_t start = ev->ts_ns;
    uint64_t end = ev->dur_ns <= UINT64_MAX - start ? start + ev->dur_ns : UINT64_MAX;
    if (kind == PI_SPAN_GC) { /* the collector, not a call of the job */
        *(depth > 0 ? &t->gc_ns : &t->gc_idle_ns) += end - start;
        return 0;
    }
    if (kind == PI_SPAN_TOKENIZER && depth > 0)
        tokenizer_call(t, start, end);
    else if (kind == PI_SPAN_MODULE && depth > 0)
        module_call(t, start, end, depth);
    else if (kind == PI_SPAN_TOKEN && depth > 0)
        token_check(t, end, depth);
    else if (kind == PI_SPAN_GENERATE)
        generate_call(t, start, end, depth);
    else if (t->run.count && depth < t->run.depth)
        run_clear(&t->run); /* the module calls were inside a call that is no generate() */
    if (kind != PI_SPAN_GENERATE && t->tokens.count && depth < t->tokens.depth)
        run_clear(&t->tokens);
    if (depth != 0)
        return 0;
    generate_placed(&t->generates);
    if (t->tokenizer.held && t->tokenizer.start >= start)
        t->tokenizing_ns += t->tokenizer.end - t->tokenizer.start;
    t->tokenizer.held = 0;
    uint64_t dur = end - start;
    memset(call, 0, sizeof(*call));
    call->tid = r->tid;
    call->name = PI_SPAN_NAME(r->arg[0]);
    call->kind = kind;
    call->start = start;
    call->end = end;
    call->tokenizing_ns = t->tokenizing_ns < dur ? t->tokenizing_ns : dur;
    /* a model called on its own is all model */
    call->model_ns = kind == PI_SPAN_MODULE ? dur : t->model_ns;
    if (call->model_ns > dur - call->tokenizing_ns)
        call->model_ns = dur - call->tokenizing_ns;
    waits_since(&t->waits, start, &call->waiting_ns, &call->sync_ns);
    call->cpu_measured = r->arg[1] != PI_SPAN_CPU_UNMEASURED;
    call->cpu_ns = call->cpu_measured ? r->arg[1] : 0;
    call->generates = t->generates.calls ? &t->generates : NULL;
    call->gc_ns = t->gc_ns < dur ? t->gc_ns : dur;
    call->gc_before_ns = t->gc_idle_ns;
    call->previous_name = t->previous_name;
    call->previous_kind = t->previous_kind;
    call->previous_known = t->previous_known;
    t->gc_idle_ns = 0;
    t->previous_name = call->name;
    t->previous_kind = kind;
    t->previous_known = 1;
    t->ended = 1;
    return 1;
}

void pi_request_threads_wait(struct pi_request_threads *s, uint32_t tid, uint64_t ts,
                             uint64_t dur, int sync)
{
    struct thread_calls *t = thread_of(s, tid);
    if (!t)
        return;
    struct wait_marks *w = &t->waits;
    if (w->seen % w->stride == 0) {
        if (w->count == WAIT_MARKS) { /* every other mark goes: every second wait from now */
            for (unsigned i = 0; i < WAIT_MARKS / 2; i++)
                w->at[i] = w->at[2 * i];
            w->count = WAIT_MARKS / 2;
            w->stride *= 2;
        }
        if (w->seen % w->stride == 0)
            w->at[w->count++] = (struct wait_mark){ts, w->total_ns, w->sync_ns};
    }
    w->seen++;
    w->total_ns += dur;
    w->sync_ns += sync ? dur : 0;
}
