/* summary_mode.c - summaries and detail windows in the writer (see summary_mode.h). */
#include "summary_mode.h"

#include <stdlib.h>
#include <string.h>

#include "flight_ring.h"
#include "profinject/summary_policy.h"
#include "recorder_internal.h"
#include "step_trigger.h"
#include "summary_table.h"

#define TABLE_SLOTS 8192u
#define RING_RECORDS (1u << 17) /* 6 MiB: seconds of a busy process */
#define CORRELATION_SLOTS (1u << 16)
/* Timings drained ahead of their call (another thread's buffer came first)
 * wait for the next flush, once, to find it. */
#define DEFERRED_RECORDS 16384u
/* A slow step's window holds its records and those of as long before it
 * as the step lasted, at most this much: the run-up to the step, bounded. */
#define REPLAY_BEFORE_NS 1000000000u

/* A call that a timing will pair with, by correlation id (PI_PAIR_CALL). */
struct correlation {
    uint64_t id;
    uint32_t timing_key1; /* key[1] of its timing's summary */
    uint16_t timing_key0; /* key[0] of it; nonzero once the call is seen */
    uint8_t in_full;      /* written in full (a window): its timing goes in full too */
};

/* Directory ids of recent paths, by path id: a file is opened, read and closed in a row. */
#define DIRECTORY_CACHE 64u
struct directory_of {
    uint32_t path, directory;
};

static struct {
    int ready;
    pi_summary_stage_fn stage; /* the writer's staging, for what goes into the file */
    pi_summary_define_fn define;
    void *stage_context;
    struct pi_summary_table table;
    struct pi_flight_ring ring;
    struct pi_step_trigger trigger;
    struct correlation *correlations;
    struct pi_record *deferred;
    uint32_t deferred_count;
    uint64_t interval_start; /* ticks; 0: nothing counted yet */
    uint64_t detail_until;   /* ticks; nonzero while a detail window is open */
    uint64_t window_start;
    uint64_t window_reason, window_step_ns;
    uint64_t last_trigger;
    _Atomic int requested; /* a detail window asked for by another thread: 1 open, 2 close */
    struct directory_of directories[DIRECTORY_CACHE];
} s;

static uint64_t ns_to_ticks(uint64_t ns)
{
    return (uint64_t)((double)ns * pi_rec.ticks_per_second / 1e9);
}

static uint64_t ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)((double)ticks * 1e9 / pi_rec.ticks_per_second);
}

void pi_summary_mode_start(pi_summary_stage_fn stage, pi_summary_define_fn define,
                           void *context)
{
    pi_summary_table_free(&s.table);
    pi_flight_ring_free(&s.ring);
    free(s.correlations);
    free(s.deferred);
    memset(&s, 0, sizeof(s));
    s.stage = stage;
    s.define = define;
    s.stage_context = context;
    s.ready = pi_summary_table_init(&s.table, TABLE_SLOTS) == 0 &&
              (s.correlations = calloc(CORRELATION_SLOTS, sizeof(*s.correlations))) != NULL &&
              (s.deferred = malloc(DEFERRED_RECORDS * sizeof(*s.deferred))) != NULL;
    pi_flight_ring_init(&s.ring, RING_RECORDS);
    pi_step_trigger_init(&s.trigger);
    /* run --duration: detail from the start until then (the control thread closes it) */
    uint64_t until = pi_record_until_ns();
    if (until && pi_clock_ns(CLOCK_MONOTONIC) < until) {
        s.window_start = pi_rec.start_ticks;
        s.window_reason = PI_DETAIL_REQUESTED;
        s.detail_until = UINT64_MAX;
    }
}

static struct pi_record *stage(uint32_t slots)
{
    return s.stage(s.stage_context, slots);
}

/* The path an I/O record or summary names (interned quiet): defined ahead of it */
static void define_path(uint16_t kind, uint64_t path)
{
    if (kind == PI_REC_IO && path)
        s.define(s.stage_context, (uint32_t)path);
}

static void stage_copy(const struct pi_record *r)
{
    define_path(r->kind, r->arg[2]);
    *stage(1) = *r;
}

static void stage_detail(uint64_t ts, uint64_t dur, uint64_t event,
                         uint64_t reason, uint64_t step_ns)
{
    struct pi_record r = {PI_REC_DETAIL, 0, 0, ts, dur, {event, reason, step_ns}};
    stage_copy(&r);
}

/* Calls a timing pairs with: what their timing will be counted under, and
 * whether it goes in full: the analyzer pairs a timing in full with its
 * call in full, and counts a summarised one under its summarised call. */
static void remember_call(const struct pi_summary_class *k, int in_full)
{
    struct correlation *c = &s.correlations[k->correlation & (CORRELATION_SLOTS - 1)];
    c->id = k->correlation;
    c->timing_key0 = (uint16_t)k->timing_key[0];
    c->timing_key1 = (uint32_t)k->timing_key[1];
    c->in_full = in_full != 0;
}

/* The call of a timing, when it was seen. */
static const struct correlation *call_of(const struct pi_summary_class *k)
{
    const struct correlation *c = &s.correlations[k->correlation & (CORRELATION_SLOTS - 1)];
    return k->pairing == PI_PAIR_TIMING && c->id == k->correlation && c->timing_key0 ? c : NULL;
}

/* The key @r is counted under, by its class @k; 0 when it stays in full. */
static int summary_key_of(const struct pi_record *r, const struct pi_summary_class *k,
                          struct pi_summary_key *key)
{
    if (k->role == PI_SUMMARY_IN_FULL)
        return 0;
    memset(key, 0, sizeof(*key));
    key->kind = r->kind;
    key->flags = r->flags;
    key->tid = r->tid;
    memcpy(key->key, k->key, sizeof(key->key));
    const struct correlation *c = call_of(k);
    if (k->pairing == PI_PAIR_TIMING && k->timing_key[0]) { /* it names what it timed */
        key->key[0] = k->timing_key[0];
        key->key[1] = k->timing_key[1];
    } else if (c) {
        key->key[0] = c->timing_key0;
        key->key[1] = c->timing_key1;
    }
    return 1;
}

static void emit_summaries(void)
{
    struct pi_summary_table *t = &s.table;
    for (uint32_t i = 0; i < t->used; i++) {
        struct pi_summary_entry *e = pi_summary_table_entry(t, i);
        if (!e->count)
            continue;
        define_path(e->key.kind, e->key.key[2]);
        pi_summary_entry_emit(e, stage(pi_summary_entry_slots(e)));
    }
    if (t->used * 2 > t->max_capacity)
        pi_summary_table_forget(t); /* subjects come and go (files read once, threads) */
}

static void replay_one(void *context, const struct pi_record *r)
{
    (void)context;
    stage_copy(r);
}

/* The flight ring's records of [@since, @until) ticks, in full, marked as counted already. */
static void replay(uint64_t since, uint64_t until, uint64_t reason,
                   uint64_t step_ns)
{
    uint64_t now = pi_clock_ticks();
    stage_detail(now, 0, PI_DETAIL_REPLAY_BEGIN, reason, step_ns);
    pi_flight_ring_replay(&s.ring, since, until, replay_one, NULL);
    stage_detail(now, 0, PI_DETAIL_REPLAY_END, reason, step_ns);
}

/*
 * Open a detail window, or widen the open one: the flight ring's records
 * from @since ticks, then everything in full. A slow step that ends while
 * a window is open widens it back to the step's start; the window names
 * the slowest step it caught, and the reason it opened for.
 */
static void open_window(uint64_t since, uint64_t reason, uint64_t step_ns,
                        uint64_t length_ns)
{
    uint64_t now = pi_clock_ticks();
    if (since < pi_rec.start_ticks) /* no record is older than the file */
        since = pi_rec.start_ticks;
    if (!s.detail_until) {
        replay(since, UINT64_MAX, reason, step_ns);
        s.window_start = since;
        s.window_reason = reason;
        s.window_step_ns = step_ns;
    } else if (since < s.window_start) {
        replay(since, s.window_start, reason, step_ns);
        s.window_start = since;
    }
    if (step_ns > s.window_step_ns) /* the window keeps the reason it opened for */
        s.window_step_ns = step_ns;
    uint64_t until = now + ns_to_ticks(length_ns);
    if (until > s.detail_until)
        s.detail_until = until;
}

static void close_window(uint64_t now)
{
    stage_detail(s.window_start, now - s.window_start, PI_DETAIL_WINDOW, s.window_reason,
                 s.window_step_ns);
    s.detail_until = 0;
    s.window_step_ns = 0;
    pi_flight_ring_clear(&s.ring); /* what it held is in the window now */
}

/* Whether the call a timing belongs to is known (or the timing named it itself). */
static int call_known(const struct pi_summary_class *k)
{
    return k->timing_key[0] || call_of(k);
}

/* Whether a counted record goes in full: inside a window, or a timing
 * whose call went in full (a summarised call's timing is summarised,
 * window or not, so that the analyzer counts each once). */
static int in_full(const struct pi_summary_class *k)
{
    const struct correlation *c = call_of(k);
    return c ? c->in_full : s.detail_until != 0;
}

static void count(const struct pi_record *r, const struct pi_summary_class *k, int may_defer)
{
    struct pi_summary_key key;
    if (k->pairing == PI_PAIR_CALL)
        remember_call(k, s.detail_until != 0);
    if (may_defer && k->pairing == PI_PAIR_TIMING && !call_known(k) &&
        s.deferred_count < DEFERRED_RECORDS) {
        s.deferred[s.deferred_count++] = *r;
        return;
    }
    if (in_full(k) || !summary_key_of(r, k, &key)) {
        stage_copy(r);
        return;
    }
    uint64_t interval = ns_to_ticks(pi_rec.config.summary_interval_ns);
    if (!s.interval_start)
        s.interval_start = r->ts;
    else if (r->ts >= s.interval_start + interval) {
        emit_summaries();
        s.interval_start = r->ts;
    }
    /* paired records stay with their calls (in_full): only unpaired ones keep a first */
    uint64_t ns = ticks_to_ns(k->ticks);
    if ((k->role == PI_SUMMARY_COUNTED_AFTER_FIRST
             ? pi_summary_table_add_after_first(&s.table, &key, r->ts, k->ticks, ns, k->bytes)
             : pi_summary_table_add(&s.table, &key, r->ts, k->ticks, ns, k->bytes)) != 0) {
        stage_copy(r); /* the first of its subject, or no room: in full, never lost */
        return;
    }
    pi_flight_ring_push(&s.ring, r);
}

/* The id of the directory path @path_id is counted under (pi_summary_directory_length); @path_id
 * itself for a path without one, 0 when the table is full. */
static uint32_t directory_of(uint32_t path_id)
{
    struct directory_of *slot = &s.directories[path_id % DIRECTORY_CACHE];
    if (slot->path == path_id && slot->directory)
        return slot->directory;
    uint32_t length;
    const char *path = pi_strings_get(&pi_rec.strings, path_id, &length);
    size_t kept = path ? pi_summary_directory_length(path, length) : 0;
    uint32_t directory = kept ? pi_strings_intern(&pi_rec.strings, path, kept) : path_id;
    slot->path = path_id;
    slot->directory = directory;
    return directory;
}

/* @r's class: the policy's (summary_policy.h), a path to be counted by directory replaced */
static void classify(const struct pi_record *r, struct pi_summary_class *k)
{
    pi_summary_classify(r, (uint32_t)pi_rec.pid, pi_rec.fork_child, k);
    if (k->by_directory && k->key[2])
        k->key[2] = directory_of((uint32_t)k->key[2]);
}

void pi_summary_mode_take(const struct pi_record *records, uint32_t n)
{
    if (!s.ready) {
        for (uint32_t i = 0; i < n; i++)
            stage_copy(&records[i]);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct pi_record *r = &records[i];
        struct pi_summary_class k;
        classify(r, &k);
        uint64_t start, end;
        int slow = pi_step_trigger_record(&s.trigger, k.step, r, &start, &end);
        count(r, &k, 1);
        uint64_t gap = ns_to_ticks(pi_rec.config.summary_trigger_gap_ns);
        if (slow && (!s.last_trigger || end >= s.last_trigger + gap)) {
            s.last_trigger = end;
            uint64_t before = ns_to_ticks(REPLAY_BEFORE_NS);
            before = end - start < before ? end - start : before;
            open_window(start > before ? start - before : 0, PI_DETAIL_SLOW_STEP,
                        ticks_to_ns(end - start), pi_rec.config.summary_detail_ns);
        }
    }
}

void pi_summary_mode_request_detail(int on)
{
    atomic_store(&s.requested, on ? 1 : 2); /* the writer's next flush opens or closes it */
}

/* A window asked for lasts until it is closed (the control thread closes it at its end). */
#define REQUESTED_WINDOW_NS (365ull * 86400 * 1000000000)

void pi_summary_mode_flush(int stopping)
{
    if (!s.ready)
        return;
    uint32_t deferred = s.deferred_count;
    s.deferred_count = 0;
    for (uint32_t i = 0; i < deferred; i++) { /* their calls have come by now, or never will */
        struct pi_summary_class k;
        classify(&s.deferred[i], &k);
        count(&s.deferred[i], &k, 0);
    }
    uint64_t now = pi_clock_ticks();
    int requested = atomic_exchange(&s.requested, 0);
    if (requested == 1 && !stopping)
        open_window(now - ns_to_ticks(REPLAY_BEFORE_NS), PI_DETAIL_REQUESTED, 0,
                    REQUESTED_WINDOW_NS);
    if (s.detail_until && (stopping || now >= s.detail_until || requested == 2))
        close_window(now);
    uint64_t interval = ns_to_ticks(pi_rec.config.summary_interval_ns);
    if (stopping || (s.interval_start && now >= s.interval_start + interval)) {
        emit_summaries();
        s.interval_start = 0;
    }
}
