/*
 * relay_steps.c - training steps when the main thread reads no pipe.
 *
 * With pin_memory=True a PyTorch DataLoader has a relay: its pin-memory
 * thread receives each batch from the workers' pipe (poll, then a read of
 * the length and one of the message), pins it and hands it to the main
 * thread through a queue.Queue. The main thread then blocks only when the
 * queue is empty (a semaphore or condition wait, the kind depends on how
 * Python was built), and reads no pipe at all.
 *
 * Counting the main thread's waits is not robust: measured on an H100 the
 * main thread also waits on condition variables once a step for the
 * autograd thread (backward) and for the GIL, and it does not wait at all
 * for a batch that is already queued. What is robust:
 *  - the relay's receipts are the batches (a receipt: a blocking receive
 *    followed by a pipe read that returns data). Messages far smaller than
 *    the typical one are control messages (a persistent worker's
 *    acknowledgement of a new epoch), not batches;
 *  - a main-thread wait is a wait for data when the relay ended it: the
 *    queue's put releases the main thread's waiter lock, a semaphore post
 *    the recorder sees (PI_REC_WAKE, format 4), so a semaphore wait of the
 *    main thread during which the relay posted that very semaphore is one,
 *    however late a busy machine lets the main thread run. Where the relay
 *    posted no semaphore (a format 3 trace, a Python whose locks are
 *    condition variables), time decides: a wait that began before a receipt
 *    and ended within HANDOVER_SLACK_NS of the relay's next blocking receive
 *    (it goes back to it right after the hand-over). The backward wait of
 *    the same step, which also spans the receipt, ends milliseconds later
 *    and is on another object: it stays a lock wait;
 *  - the main thread's scalar read-back (loss.item(): a device-to-host
 *    copy of a few bytes) happens once a step in time order on that thread,
 *    whereas the relay runs ahead of the loop by the prefetch depth (its
 *    last receipts are batches never used). Where there is one read-back per
 *    batch, the read-backs count the steps, the batches confirm that they
 *    are training steps; without CUDA the relay's batches count them;
 *  - a DataLoader without persistent workers starts a new pin-memory thread
 *    each epoch: the relay is the thread with the most receipts and every
 *    other one whose receipts are of its size and whose time spans none of
 *    theirs, in time order (seen on an H200: the first epoch's thread alone
 *    counted 63 of a job's 100 steps).
 * Without any data loader the read-backs alone are the steps' heartbeat.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/model/model.h"
#include "analysis/common/array_room.h"
#include "analysis/host/steps.h"
#include "relay_steps.h"
#include "step_anchors.h"

/* threads that received from pipes: a pin-memory thread an epoch, and others */
#define RELAY_MAX_CANDIDATES 256
#define HANDOVER_SLACK_NS 1000000u
#define READBACK_MAX_BYTES 16
/* a read-back after under this share of a typical step's CUDA calls is the same step's */
#define READBACK_EXTRA_FRACTION 0.1
/* fewer receipts than this are not a training loop (torch.compile's workers talk through pipes too) */
#define RELAY_MIN_RECEIPTS 8

struct receipt {
    uint64_t end;      /* end of the read that completed the message */
    uint64_t next;     /* start of the relay's next blocking receive: the hand-over */
    uint64_t bytes;    /* bytes read from pipes for it */
};

struct relay_candidate {
    uint32_t tid;
    int polled;                 /* a blocking receive since the last receipt */
    struct receipt *receipts;
    size_t count, capacity;
};

/* The relay: one or more threads in turn, their receipts in time order. */
struct relay {
    uint32_t tids[RELAY_MAX_CANDIDATES];
    int thread_count;
    struct receipt *receipts;
    size_t count;
};

struct main_wait {
    uint64_t start, end;
    uint64_t object; /* the semaphore or condition waited on */
};

struct wake {
    uint64_t at, object;
    uint32_t tid;
};

struct pi_step_sources {
    /* grown as threads receive: a fixed array of the most was 12 KB in every process, most
     * of them without a relay (3 MB of the analysis of 256 ranks) */
    struct relay_candidate *relays;
    int relay_count;
    size_t relay_capacity;
    struct main_wait *waits; /* the main thread's lock and condition waits, in time order */
    size_t wait_count, wait_capacity;
    struct wake *wakes; /* semaphore posts of other threads that woke a waiter, in time order */
    size_t wake_count, wake_capacity;
    struct pi_steps readback; /* one step per scalar read-back */
    uint64_t readback_last, readback_wait, readback_sync, last_wait_end;
    uint64_t calls;           /* the main thread's CUDA calls since the last read-back */
    uint64_t *readback_calls; /* of each read-back step, to tell extra read-backs from steps */
    size_t readback_calls_capacity;
    struct pi_steps relay;    /* one step per batch of the relay */
    struct relay chosen;
    struct pi_anchors anchors; /* GPU time and sync between any thread's receipts */
    uint64_t relay_data_wait_ns; /* main-thread waits for the relay's batches */
};

static struct pi_step_sources *sources_of(struct pi_process_info *p, int exact)
{
    if (!p->step_sources) {
        p->step_sources = calloc(1, sizeof(struct pi_step_sources));
        if (p->step_sources) {
            pi_histogram_init(&p->step_sources->readback.steady_ns, exact);
            pi_histogram_init(&p->step_sources->readback.warmup_ns, exact);
            pi_histogram_init(&p->step_sources->relay.steady_ns, exact);
            pi_histogram_init(&p->step_sources->relay.warmup_ns, exact);
        }
    }
    return p->step_sources;
}

static struct relay_candidate *candidate(struct pi_step_sources *s, uint32_t tid)
{
    for (int i = 0; i < s->relay_count; i++)
        if (s->relays[i].tid == tid)
            return &s->relays[i];
    if (s->relay_count == RELAY_MAX_CANDIDATES ||
        pi_array_room(&s->relays, &s->relay_capacity, (size_t)s->relay_count, sizeof(*s->relays),
                      4) != 0)
        return NULL;
    struct relay_candidate *c = &s->relays[s->relay_count++];
    memset(c, 0, sizeof(*c));
    c->tid = tid;
    return c;
}

void pi_relay_io(struct pi_process_info *p, const struct pi_event *ev, int exact)
{
    const struct pi_record *r = &ev->rec;
    unsigned op = PI_IO_OP(r->flags), fd_class = PI_IO_CLASS(r->flags);
    if (fd_class != PI_FD_PIPE && fd_class != PI_FD_SOCKET)
        return;
    int waits = pi_io_waits_ready(op);
    int reads = pi_io_is_pipe_receipt(op, fd_class) && !(r->flags & PI_FLAG_FAILED) &&
                (int64_t)r->arg[1] > 0;
    if (!waits && !reads)
        return;
    struct pi_step_sources *s = sources_of(p, exact);
    struct relay_candidate *c = s ? candidate(s, r->tid) : NULL;
    if (!c)
        return;
    if (waits) {
        if (c->count && c->receipts[c->count - 1].next == UINT64_MAX)
            c->receipts[c->count - 1].next = ev->ts_ns;
        c->polled = 1;
        return;
    }
    if (!c->polled && c->count) {
        /* the rest of the message: the same receipt */
        c->receipts[c->count - 1].end = ev->ts_ns + ev->dur_ns;
        c->receipts[c->count - 1].bytes += r->arg[1];
        return;
    }
    if (pi_array_room(&c->receipts, &c->capacity, c->count, sizeof(*c->receipts), 256) != 0)
        return;
    c->receipts[c->count++] = (struct receipt){ev->ts_ns + ev->dur_ns, UINT64_MAX, r->arg[1]};
    c->polled = 0;
    pi_anchors_mark(&s->anchors, ev->ts_ns + ev->dur_ns);
}

void pi_relay_wake(struct pi_process_info *p, const struct pi_event *ev, int exact)
{
    struct pi_step_sources *s = sources_of(p, exact);
    if (s && pi_array_room(&s->wakes, &s->wake_capacity, s->wake_count, sizeof(*s->wakes), 256) == 0)
        s->wakes[s->wake_count++] = (struct wake){ev->ts_ns, ev->rec.arg[0], ev->rec.tid};
}

void pi_relay_main_event(struct pi_process_info *p, const struct pi_event *ev, unsigned time_class,
                         int exact)
{
    const struct pi_record *r = &ev->rec;
    struct pi_step_sources *s = sources_of(p, exact);
    if (!s)
        return;
    uint64_t end = ev->ts_ns + ev->dur_ns;
    if (r->kind == PI_REC_WAIT && p->children > 0) {
        if (pi_array_room(&s->waits, &s->wait_capacity, s->wait_count, sizeof(*s->waits), 256) == 0)
            s->waits[s->wait_count++] = (struct main_wait){ev->ts_ns, end, r->arg[1]};
    }
    if (time_class == PI_TIME_DATA_WAIT)
        s->readback_wait += ev->dur_ns;
    if (time_class == PI_TIME_SYNC) {
        s->readback_sync += ev->dur_ns;
        pi_anchors_add(&s->anchors, PI_ANCHOR_SYNC, ev->ts_ns, ev->dur_ns);
    }
    if (time_class == PI_TIME_DATA_WAIT || time_class == PI_TIME_LOCK_WAIT)
        s->last_wait_end = end;
    if (r->kind >= PI_REC_GPU_ALLOC && r->kind <= PI_REC_GPU_SYNC && !(r->flags & PI_CUDA_NESTED))
        s->calls++;
    int readback = r->kind == PI_REC_GPU_COPY && PI_CUDA_SUBTYPE(r->flags) == PI_GPU_COPY_DTOH &&
                   !(r->flags & PI_CUDA_NESTED) && r->arg[0] <= READBACK_MAX_BYTES;
    if (!readback)
        return;
    /* the first step starts where the main thread last waited before its first read-back,
     * else at the process's start */
    uint64_t start = s->readback_last   ? s->readback_last
                     : s->last_wait_end ? s->last_wait_end
                                        : p->start_ns;
    if (start && start < ev->ts_ns) {
        if (pi_array_room(&s->readback_calls, &s->readback_calls_capacity, s->readback.count,
                          sizeof(*s->readback_calls), 256) == 0) {
            s->readback_calls[s->readback.count] = s->calls - 1; /* not the read-back itself */
            pi_steps_record(&s->readback, start, end, s->readback_wait, s->readback_sync);
        }
    }
    s->calls = 0;
    s->readback_last = end;
    s->readback_wait = s->readback_sync = 0;
}

void pi_relay_gpu(struct pi_process_info *p, uint64_t ts, uint64_t dur, int collective)
{
    if (!p->step_sources)
        return;
    pi_steps_gpu(&p->step_sources->readback, ts, dur);
    pi_anchors_add(&p->step_sources->anchors, PI_ANCHOR_GPU, ts, dur);
    if (collective)
        pi_steps_collective_gpu(&p->step_sources->readback, ts, dur);
}

/* The typical message size of @c: its median. */
static uint64_t median_bytes(const struct relay_candidate *c)
{
    uint64_t *sizes = malloc(c->count * sizeof(*sizes));
    if (!sizes)
        return 0;
    for (size_t i = 0; i < c->count; i++)
        sizes[i] = c->receipts[i].bytes;
    pi_sort_u64(sizes, c->count);
    uint64_t median = sizes[c->count / 2];
    free(sizes);
    return median;
}

static int is_relay(const struct relay *r, uint32_t tid)
{
    for (int i = 0; i < r->thread_count; i++)
        if (r->tids[i] == tid)
            return 1;
    return 0;
}

/* Whether the relay @r posted @w's object while @w waited; @first: the first wake
 * not before the previous wait's start (waits and wakes are in time order). */
static int woken_by(const struct pi_step_sources *s, size_t *first, const struct relay *r,
                    const struct main_wait *w)
{
    while (*first < s->wake_count && s->wakes[*first].at < w->start)
        (*first)++;
    for (size_t j = *first; j < s->wake_count && s->wakes[j].at <= w->end; j++)
        if (s->wakes[j].object == w->object && is_relay(r, s->wakes[j].tid))
            return 1;
    return 0;
}

static void add_data_wait(struct pi_step_sources *s, const struct main_wait *w)
{
    pi_steps_add_wait(&s->relay, w->start, w->end - w->start);
    pi_steps_add_wait(&s->readback, w->start, w->end - w->start);
}

/* Main-thread waits that ended when the relay handed a batch over: data waits. */
static uint64_t relay_data_waits(struct pi_step_sources *s, const struct relay *c,
                                 uint64_t min_bytes)
{
    uint64_t total = 0;
    size_t k = 0, first_wake = 0, relay_wakes = 0;
    for (size_t j = 0; j < s->wake_count; j++)
        relay_wakes += is_relay(c, s->wakes[j].tid);
    for (size_t i = 0; i < s->wait_count; i++) {
        const struct main_wait *w = &s->waits[i];
        if (woken_by(s, &first_wake, c, w)) {
            total += w->end - w->start;
            add_data_wait(s, w);
            continue;
        }
        while (k < c->count && c->receipts[k].end < w->start)
            k++;
        /* receipts k.. ended after the wait began; the first batch among them */
        size_t b = k;
        while (b < c->count && c->receipts[b].bytes < min_bytes)
            b++;
        if (b == c->count || c->receipts[b].end > w->end || c->receipts[b].next == UINT64_MAX)
            continue;
        uint64_t handover = c->receipts[b].next;
        if (!relay_wakes && w->end + HANDOVER_SLACK_NS >= handover &&
            w->end <= handover + HANDOVER_SLACK_NS) {
            total += w->end - w->start;
            add_data_wait(s, w);
        }
    }
    return total;
}

/* The thread with the most receipts other than @main, NULL when none. */
static const struct relay_candidate *busiest(const struct pi_step_sources *s, uint32_t main)
{
    const struct relay_candidate *best = NULL;
    for (int i = 0; i < s->relay_count; i++)
        if (s->relays[i].tid != main && s->relays[i].count &&
            (!best || s->relays[i].count > best->count))
            best = &s->relays[i];
    return best;
}

static int overlaps(const struct relay_candidate *a, const struct relay_candidate *b)
{
    return a->receipts[0].end <= b->receipts[b->count - 1].end &&
           b->receipts[0].end <= a->receipts[a->count - 1].end;
}

static int by_first_receipt(const void *a, const void *b)
{
    const struct relay_candidate *x = *(const struct relay_candidate *const *)a;
    const struct relay_candidate *y = *(const struct relay_candidate *const *)b;
    return (x->receipts[0].end > y->receipts[0].end) - (x->receipts[0].end < y->receipts[0].end);
}

/* The relay into @s->chosen: the busiest thread, with at least RELAY_MIN_RECEIPTS
 * receipts itself (threads with a few messages each are no training loop), and
 * the others that took turns with it (receipts of its typical size, at times of
 * their own). Return: their typical size, 0 when none. */
static uint64_t choose_relay(struct pi_step_sources *s, uint32_t main)
{
    const struct relay_candidate *best = busiest(s, main), *in[RELAY_MAX_CANDIDATES];
    uint64_t typical = best && best->count >= RELAY_MIN_RECEIPTS ? median_bytes(best) : 0;
    if (!typical)
        return 0;
    int n = 0;
    size_t total = 0;
    in[n++] = best;
    total += best->count;
    for (int i = 0; i < s->relay_count; i++) {
        const struct relay_candidate *c = &s->relays[i];
        if (c == best || c->tid == main || !c->count)
            continue;
        uint64_t size = median_bytes(c);
        int alone = size * 2 >= typical && size <= typical * 2;
        for (int j = 0; alone && j < n; j++)
            alone = !overlaps(c, in[j]);
        if (alone) {
            in[n++] = c;
            total += c->count;
        }
    }
    struct relay *r = &s->chosen;
    if (!(r->receipts = malloc(total * sizeof(*r->receipts))))
        return 0;
    qsort(in, (size_t)n, sizeof(*in), by_first_receipt);
    for (int j = 0; j < n; j++) {
        memcpy(r->receipts + r->count, in[j]->receipts, in[j]->count * sizeof(*r->receipts));
        r->count += in[j]->count;
        r->tids[r->thread_count++] = in[j]->tid;
    }
    return typical;
}

uint64_t pi_relay_finish(struct pi_process_info *p, unsigned warmup_steps)
{
    struct pi_step_sources *s = p->step_sources;
    if (!s)
        return 0;
    uint64_t batches = 0;
    /* control messages are a fraction of a batch's size */
    uint64_t min_bytes = !p->steps.count && p->children > 0
                             ? choose_relay(s, (uint32_t)p->header.pid) / 2 : 0;
    const struct relay *c = &s->chosen;
    pi_anchors_close(&s->anchors);
    if (c->count) {
        uint64_t previous = 0;
        for (size_t i = 0; i < c->count; i++) {
            if (c->receipts[i].bytes < min_bytes)
                continue;
            if (previous) {
                uint64_t end = c->receipts[i].end;
                pi_steps_record(&s->relay, previous, end, 0,
                                pi_anchors_between(&s->anchors, PI_ANCHOR_SYNC, previous, end));
                pi_steps_gpu(&s->relay, previous,
                             pi_anchors_between(&s->anchors, PI_ANCHOR_GPU, previous, end));
            }
            previous = c->receipts[i].end;
            batches++;
        }
        s->relay_data_wait_ns = relay_data_waits(s, c, min_bytes);
    }
    /* Hugging Face's Trainer tests each step's loss with isnan() and isinf():
     * a read-back each, with a launch or two between them and hundreds before
     * the next step's; timing would not tell them apart on a loaded machine */
    if (s->readback_calls)
        pi_steps_merge_light(&s->readback, s->readback_calls, READBACK_EXTRA_FRACTION);
    uint64_t direct = p->steps.count;
    uint64_t reads = s->readback.count, known = direct ? direct : batches;
    /* one read-back per batch: at least half as many, at most 10% (+2) more */
    int by_readback = reads >= 3 && (known == 0 ? !p->nvtx_steps.count
                                                : reads * 2 >= known && reads <= known * 11 / 10 + 2);
    pi_steps_finish(&s->readback, warmup_steps);
    pi_steps_finish(&s->relay, warmup_steps);
    struct pi_steps *chosen = NULL;
    if (by_readback) {
        chosen = &s->readback;
        p->steps_from = direct ? "data loader, one read-back a step"
                        : batches ? "pin-memory thread, one read-back a step"
                                  : "CUDA read-back";
    } else if (!direct && s->relay.count) {
        chosen = &s->relay;
        p->steps_from = "pin-memory thread";
    }
    if (chosen) {
        struct pi_steps previous = p->steps;
        p->steps = *chosen;
        *chosen = previous;
    }
    /* what only the relay's steps needed: not kept for the rest of the analysis,
     * which holds every process of a many-rank job */
    pi_anchors_free(&s->anchors);
    free(s->chosen.receipts);
    s->chosen.receipts = NULL;
    s->chosen.count = 0;
    return s->relay_data_wait_ns;
}

uint32_t pi_relay_thread(const struct pi_process_info *p)
{
    return p->step_sources && p->step_sources->chosen.thread_count
               ? p->step_sources->chosen.tids[0] : 0;
}

void pi_relay_free(struct pi_process_info *p)
{
    struct pi_step_sources *s = p->step_sources;
    if (!s)
        return;
    for (int i = 0; i < s->relay_count; i++)
        free(s->relays[i].receipts);
    free(s->relays);
    free(s->chosen.receipts);
    pi_anchors_free(&s->anchors);
    free(s->waits);
    free(s->wakes);
    free(s->readback_calls);
    pi_steps_free(&s->readback);
    pi_steps_free(&s->relay);
    free(s);
    p->step_sources = NULL;
}
