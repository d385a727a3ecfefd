/*
 * waits_in_flight.c - the waits threads are blocked in now (recorder.h:
 * pi_wait_begin), read from their slots by the thread that ends the process.
 */
#include "recorder_internal.h"

void *(*_Atomic pi_wait_python_thread)(void);

/* The waits in flight of the threads (@tid's alone, when not 0), into @out (at most @max). */
static int waits_of(uint32_t tid, struct pi_wait_snapshot *out, int max)
{
    int n = 0;
    uint32_t used = atomic_load(&pi_rec.thread_slots_used);
    for (uint32_t i = 1; i < used && i < PI_THREAD_SLOTS && n < max; i++) {
        struct pi_thread_slot *slot = &pi_rec.thread_slots[i];
        if (atomic_load(&slot->state) != PI_SLOT_IN_USE ||
            (tid && atomic_load(&slot->tid) != tid))
            continue;
        struct pi_wait_in_flight *w = &slot->wait;
        uint64_t since = atomic_load_explicit(&w->since, memory_order_acquire);
        if (!since)
            continue;
        struct pi_wait_snapshot s = {
            .tid = atomic_load(&slot->tid),
            .what = atomic_load_explicit(&w->what, memory_order_relaxed),
            .since = since,
            .object = atomic_load_explicit(&w->object, memory_order_relaxed),
            .python_thread = atomic_load_explicit(&w->python_thread, memory_order_relaxed),
            .slot = i,
        };
        /* still the same wait: its fields were not half rewritten by a next one */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&w->since, memory_order_relaxed) == since)
            out[n++] = s;
    }
    return n;
}

int pi_waits_in_flight(struct pi_wait_snapshot *out, int max)
{
    return waits_of(0, out, max);
}

int pi_wait_of_thread(uint32_t tid, struct pi_wait_snapshot *out)
{
    return waits_of(tid, out, 1);
}

int pi_wait_still(const struct pi_wait_snapshot *s)
{
    const struct pi_thread_slot *slot = &pi_rec.thread_slots[s->slot];
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&slot->wait.since, memory_order_relaxed) == s->since &&
           atomic_load(&slot->tid) == s->tid;
}
