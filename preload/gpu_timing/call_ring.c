/*
 * call_ring.c - per-thread rings of timed calls (see call_ring.h).
 *
 * Each launching thread writes its own ring; one reader (the thread that
 * CUPTI hands buffers to, serialised by the caller) searches them. A slot
 * is a sequence lock: odd while written, 2n+2 once call n is in it, so a
 * reader never takes a half-written or overwritten slot for a whole one.
 * Calls of a thread do not overlap and come in time order, so a search
 * walks from where the last one ended: API records come nearly in order.
 */
#include "call_ring.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/raw_syscalls.h"
#include "core/recorder.h"

#define RING_SLOTS 16384u /* 512 KiB a thread: ~80 ms of launches at 200 k/s */
#define MAX_RINGS 512

struct call_slot {
    _Atomic uint64_t sequence;
    _Atomic uint64_t start, end, correlation;
};

struct call_ring {
    uint32_t tid;
    uint32_t pthread_low;
    _Atomic uint64_t written;
    uint64_t cursor; /* the reader's */
    struct call_slot slots[RING_SLOTS];
};

static struct call_ring *_Atomic rings[MAX_RINGS];
static _Atomic uint32_t ring_count;
static _Atomic uint32_t generation = 1;
static _Atomic uint64_t missed;
static __thread struct call_ring *mine __attribute__((tls_model("initial-exec")));
static __thread uint32_t mine_generation __attribute__((tls_model("initial-exec")));

static struct call_ring *claim(void)
{
    uint32_t current = atomic_load(&generation);
    mine = NULL;
    mine_generation = current;
    uint32_t index = atomic_fetch_add(&ring_count, 1);
    if (index >= MAX_RINGS)
        return NULL;
    struct call_ring *r = pi_sys_anonymous_map(sizeof(*r));
    if (r == MAP_FAILED)
        return NULL;
    r->tid = pi_current_tid();
    r->pthread_low = (uint32_t)pthread_self();
    atomic_store_explicit(&rings[index], r, memory_order_release);
    mine = r;
    return r;
}

void pi_call_ring_note(uint64_t start, uint64_t end, uint64_t correlation)
{
    struct call_ring *r = mine;
    if (__builtin_expect(!r || mine_generation != atomic_load_explicit(&generation,
                                                                       memory_order_relaxed),
                         0)) {
        int saved = errno;
        r = claim();
        errno = saved;
        if (!r) {
            atomic_fetch_add_explicit(&missed, 1, memory_order_relaxed);
            return;
        }
    }
    uint64_t n = atomic_load_explicit(&r->written, memory_order_relaxed);
    struct call_slot *s = &r->slots[n % RING_SLOTS];
    atomic_store_explicit(&s->sequence, 2 * n + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->start, start, memory_order_relaxed);
    atomic_store_explicit(&s->end, end, memory_order_relaxed);
    atomic_store_explicit(&s->correlation, correlation, memory_order_relaxed);
    atomic_store_explicit(&s->sequence, 2 * n + 2, memory_order_release);
    atomic_store_explicit(&r->written, n + 1, memory_order_release);
}

struct call {
    uint64_t start, end, correlation;
};

/* Call @n of @r, if the slot still holds it whole. */
static int read_call(struct call_ring *r, uint64_t n, struct call *out)
{
    struct call_slot *s = &r->slots[n % RING_SLOTS];
    uint64_t before = atomic_load_explicit(&s->sequence, memory_order_acquire);
    if (before != 2 * n + 2)
        return 0;
    out->start = atomic_load_explicit(&s->start, memory_order_relaxed);
    out->end = atomic_load_explicit(&s->end, memory_order_relaxed);
    out->correlation = atomic_load_explicit(&s->correlation, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->sequence, memory_order_relaxed) == before;
}

static struct call_ring *ring_of(uint32_t thread, int by_pthread)
{
    uint32_t count = atomic_load_explicit(&ring_count, memory_order_acquire);
    if (count > MAX_RINGS)
        count = MAX_RINGS;
    for (uint32_t i = count; i-- > 0;) { /* the newest ring of a reused thread id first */
        struct call_ring *r = atomic_load_explicit(&rings[i], memory_order_acquire);
        if (r && (by_pthread ? r->pthread_low : r->tid) == thread)
            return r;
    }
    return NULL;
}

enum pi_call_lookup pi_call_ring_find(uint32_t thread, int by_pthread, uint64_t start, uint64_t end,
                                      uint64_t *correlation)
{
    struct call_ring *r = ring_of(thread, by_pthread);
    if (!r)
        return PI_CALL_UNTIMED;
    uint64_t written = atomic_load_explicit(&r->written, memory_order_acquire);
    if (written == 0)
        return PI_CALL_UNTIMED;
    uint64_t oldest = written > RING_SLOTS ? written - RING_SLOTS : 0;
    uint64_t i = r->cursor < oldest ? oldest : r->cursor >= written ? written - 1 : r->cursor;
    struct call c;
    if (!read_call(r, i, &c))
        return PI_CALL_GONE;
    /* the last call that began by @end: back while later, on while the next is not */
    while (c.start > end) {
        if (i == oldest)
            return oldest > 0 ? PI_CALL_GONE : PI_CALL_UNTIMED;
        if (!read_call(r, --i, &c))
            return PI_CALL_GONE;
    }
    struct call next;
    while (i + 1 < written && read_call(r, i + 1, &next) && next.start <= end) {
        i++;
        c = next;
    }
    r->cursor = i;
    if (c.end < start)
        return PI_CALL_UNTIMED; /* between two of our calls: one we did not time */
    *correlation = c.correlation;
    return PI_CALL_FOUND;
}

uint64_t pi_call_ring_missed(void)
{
    return atomic_exchange(&missed, 0);
}

void pi_call_ring_after_fork(void)
{
    atomic_store(&ring_count, 0);
    for (uint32_t i = 0; i < MAX_RINGS; i++)
        atomic_store(&rings[i], NULL);
    atomic_fetch_add(&generation, 1);
    atomic_store(&missed, 0);
}
