/* summary_mode.c - summaries and detail windows in the writer (see summary_mode.h). */
#include "summary_mode.h"

#include <stdlib.h>
#include <string.h>

#include "flight_ring.h"
#include "recorder_internal.h"
#include "step_trigger.h"
#include "summary_table.h"

#define TABLE_SLOTS 8192u
#define RING_RECORDS (1u << 17) /* 6 MiB: seconds of a busy GPU process */
#define CORRELATION_SLOTS (1u << 16)
/* GPU times drained ahead of their launch (another thread's buffer came
 * first) wait for the next flush, once, to find it. */
#define DEFERRED_RECORDS 16384u
/* A slow step's window holds its records and those of as long before it
 * as the step lasted, at most this much: the run-up to the step, bounded. */
#define REPLAY_BEFORE_NS 1000000000u

/* What a launch or copy was, by correlation id, for its GPU time. */
struct correlation {
    uint64_t id;
    uint16_t kind, flags;
    uint32_t name : 31;
    uint32_t in_full : 1; /* written in full (a window): its GPU time goes in full too */
};

static struct {
    int ready;
    pi_summary_stage_fn stage; /* the writer's staging, for what goes into the file */
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
} s;

static uint64_t ns_to_ticks(uint64_t ns)
{
    return (uint64_t)((double)ns * pi_rec.ticks_per_second / 1e9);
}

static uint64_t ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)((double)ticks * 1e9 / pi_rec.ticks_per_second);
}

void pi_summary_mode_start(pi_summary_stage_fn stage, void *context)
{
    pi_summary_table_free(&s.table);
    pi_flight_ring_free(&s.ring);
    free(s.correlations);
    free(s.deferred);
    memset(&s, 0, sizeof(s));
    s.stage = stage;
    s.stage_context = context;
    s.ready = pi_summary_table_init(&s.table, TABLE_SLOTS) == 0 &&
              (s.correlations = calloc(CORRELATION_SLOTS, sizeof(*s.correlations))) != NULL &&
              (s.deferred = malloc(DEFERRED_RECORDS * sizeof(*s.deferred))) != NULL;
    pi_flight_ring_init(&s.ring, RING_RECORDS);
    pi_step_trigger_init(&s.trigger, (uint32_t)pi_rec.pid);
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

static void stage_copy(const struct pi_record *r)
{
    *stage(1) = *r;
}

static void stage_detail(uint64_t ts, uint64_t dur, uint64_t event,
                         uint64_t reason, uint64_t step_ns)
{
    struct pi_record r = {PI_REC_DETAIL, 0, 0, ts, dur, {event, reason, step_ns}};
    stage_copy(&r);
}

static uint64_t size_class_low(uint64_t bytes)
{
    /* the analyzer's size classes of copies: <64 KiB, 64 KiB-1 MiB, 1-16 MiB, >=16 MiB */
    return bytes < (64u << 10)   ? 0
           : bytes < (1u << 20)  ? (64u << 10)
           : bytes < (16u << 20) ? (1u << 20)
                                 : (16u << 20);
}

/* Launches and copies: what their GPU time will be counted under, and
 * whether it goes in full: the analyzer pairs a GPU time in full with its
 * call in full, and counts a summarised one under its summarised call. */
static void remember_call(const struct pi_record *r, int in_full)
{
    uint64_t id = r->kind == PI_REC_GPU_LAUNCH ? r->arg[0] : r->arg[1];
    struct correlation *c = &s.correlations[id & (CORRELATION_SLOTS - 1)];
    c->id = id;
    c->kind = r->kind;
    c->flags = r->flags;
    c->name = r->kind == PI_REC_GPU_LAUNCH ? (uint32_t)r->arg[1] & 0x7fffffffu : 0;
    c->in_full = in_full != 0;
}

/* The call of a GPU time, when it was seen. */
static const struct correlation *call_of(const struct pi_record *r)
{
    const struct correlation *c = &s.correlations[r->arg[0] & (CORRELATION_SLOTS - 1)];
    return c->id == r->arg[0] && c->kind ? c : NULL;
}

/*
 * Which I/O is summarised: regular files on any thread; on the other
 * threads all but what steps are made of, the waits for a pipe or a socket
 * and the reads of a pipe (a pin-memory thread's receipts of batches). The
 * main thread's pipe and socket I/O stays in full: its data waits and
 * batch receipts are its steps.
 */
static int summarised_io(const struct pi_record *r)
{
    unsigned op = PI_IO_OP(r->flags), fd_class = PI_IO_CLASS(r->flags);
    if (fd_class == PI_FD_FILE)
        return 1;
    if (r->tid == (uint32_t)pi_rec.pid)
        return 0;
    int waits = (fd_class == PI_FD_PIPE || fd_class == PI_FD_SOCKET) && pi_io_waits_ready(op);
    return !(waits || pi_io_is_pipe_receipt(op, fd_class));
}

/* The key @r is counted under, with its bytes; 0 when it stays in full. */
static int summary_key_of(const struct pi_record *r, struct pi_summary_key *k, uint64_t *bytes)
{
    memset(k, 0, sizeof(*k));
    k->kind = r->kind;
    k->flags = r->flags;
    k->tid = r->tid;
    *bytes = 0;
    switch (r->kind) {
    case PI_REC_GPU_LAUNCH:
        k->key[1] = r->arg[1];
        return 1;
    case PI_REC_GPU_COPY:
        k->key[0] = size_class_low(r->arg[0]);
        *bytes = r->arg[0];
        /* the main thread's blocking copies (loss.item()) are its steps' synchronisation */
        return r->tid != (uint32_t)pi_rec.pid || (r->flags & (PI_CUDA_ASYNC | PI_CUDA_NESTED));
    case PI_REC_GPU_TIME: {
        const struct correlation *c = call_of(r);
        if ((r->flags & PI_GPU_TIME_PART) && r->arg[2]) { /* the GPU's own name (CUPTI) */
            k->key[0] = PI_REC_GPU_LAUNCH;
            k->key[1] = r->arg[2];
        } else if (c) {
            k->key[0] = c->kind;
            k->key[1] = c->kind == PI_REC_GPU_LAUNCH ? c->name : c->flags;
        }
        return 1;
    }
    case PI_REC_IO: {
        unsigned op = PI_IO_OP(r->flags);
        if (!summarised_io(r))
            return 0;
        k->key[2] = r->arg[2];
        *bytes = !(r->flags & PI_FLAG_FAILED) && pi_io_moves_bytes(op) ? r->arg[1] : 0;
        return 1;
    }
    case PI_REC_WAIT:
        k->key[0] = r->arg[0];
        k->key[1] = r->arg[1];
        return r->tid != (uint32_t)pi_rec.pid; /* the main thread's make steps */
    default:
        return 0;
    }
}

static void emit_summaries(void)
{
    struct pi_summary_table *t = &s.table;
    for (uint32_t i = 0; i < t->used; i++) {
        struct pi_summary_entry *e = pi_summary_table_entry(t, i);
        if (e->count)
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

/* Whether the call a GPU time belongs to is known (or the GPU named the kernel itself). */
static int call_known(const struct pi_record *r)
{
    return ((r->flags & PI_GPU_TIME_PART) && r->arg[2]) || call_of(r);
}

/* Whether @r goes in full: outside the summarised kinds, inside a window,
 * or a GPU time whose call went in full (a summarised call's GPU time is
 * summarised, window or not, so that the analyzer counts each once). */
static int in_full(const struct pi_record *r)
{
    if (r->kind == PI_REC_GPU_TIME && call_of(r))
        return call_of(r)->in_full;
    return s.detail_until != 0;
}

static void count(const struct pi_record *r, int may_defer)
{
    struct pi_summary_key key;
    uint64_t bytes;
    if (r->kind == PI_REC_GPU_LAUNCH || r->kind == PI_REC_GPU_COPY)
        remember_call(r, s.detail_until != 0);
    if (may_defer && r->kind == PI_REC_GPU_TIME && !call_known(r) &&
        s.deferred_count < DEFERRED_RECORDS) {
        s.deferred[s.deferred_count++] = *r;
        return;
    }
    if (in_full(r) || !summary_key_of(r, &key, &bytes)) {
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
    /* I/O and waits have subjects met once (the files an import reads): their first
     * record goes in full; GPU records stay paired with their calls (in_full) */
    int first_in_full = r->kind == PI_REC_IO || r->kind == PI_REC_WAIT;
    uint64_t ns = ticks_to_ns(r->dur);
    if ((first_in_full
             ? pi_summary_table_add_after_first(&s.table, &key, r->ts, r->dur, ns, bytes)
             : pi_summary_table_add(&s.table, &key, r->ts, r->dur, ns, bytes)) != 0) {
        stage_copy(r); /* the first of its subject, or no room: in full, never lost */
        return;
    }
    pi_flight_ring_push(&s.ring, r);
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
        uint64_t start, end;
        int slow = pi_step_trigger_record(&s.trigger, r, &start, &end);
        count(r, 1);
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
    for (uint32_t i = 0; i < deferred; i++) /* their launches have come by now, or never will */
        count(&s.deferred[i], 0);
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
