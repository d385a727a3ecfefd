/*
 * live_allocations.c - the CUDA allocations live right now (see
 * live_allocations.h). Allocations are rare behind caching allocators, so
 * a spin lock and an open-addressing table are enough; the table is in
 * zero-filled memory and costs nothing until used.
 */
#include "live_allocations.h"

#include <stdatomic.h>

#include "core/clock.h"
#include "core/diagnostics.h"
#include "core/process_events.h"
#include "core/recorder.h"

#define SLOTS (1u << 16) /* allocations tracked at once; more are counted as missed */

struct live_slot {
    uint64_t pointer; /* 0: empty */
    uint64_t bytes;
    uint64_t where;
    uint16_t flags;
};

static struct live_slot slots[SLOTS];
static atomic_flag lock = ATOMIC_FLAG_INIT;
static uint32_t used;
static _Atomic uint64_t missed; /* allocations the full table could not hold */
static _Atomic uint64_t device_bytes; /* what the device allocations in the table hold */

static void acquire(void)
{
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        __builtin_ia32_pause();
}

static void release(void)
{
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

static uint32_t home(uint64_t pointer)
{
    return (uint32_t)((pointer * 0x9e3779b97f4a7c15ull) >> 48) & (SLOTS - 1);
}

/* the index of @pointer's slot, or of the empty slot that ends its probe */
static uint32_t probe(uint64_t pointer)
{
    uint32_t i = home(pointer);
    while (slots[i].pointer != 0 && slots[i].pointer != pointer)
        i = (i + 1) & (SLOTS - 1);
    return i;
}

static void remember(uint16_t flags, uint64_t pointer, uint64_t bytes, uint64_t where)
{
    uint32_t i = probe(pointer);
    if (slots[i].pointer == 0) {
        if (used + 1 >= SLOTS) { /* one slot stays empty so every probe ends */
            atomic_fetch_add(&missed, 1);
            return;
        }
        used++;
    }
    slots[i] = (struct live_slot){pointer, bytes, where, flags};
    if (!pi_gpu_alloc_on_host(PI_CUDA_SUBTYPE(flags)))
        atomic_fetch_add_explicit(&device_bytes, bytes, memory_order_relaxed);
}

/* Linear probing without tombstones: later entries of the run move back,
 * so probes stay short however many allocations come and go. */
static void forget(uint64_t pointer)
{
    uint32_t i = probe(pointer);
    if (slots[i].pointer == 0)
        return;
    for (uint32_t j = i;;) {
        j = (j + 1) & (SLOTS - 1);
        if (slots[j].pointer == 0)
            break;
        uint32_t k = home(slots[j].pointer);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            slots[i] = slots[j];
            i = j;
        }
    }
    if (!pi_gpu_alloc_on_host(PI_CUDA_SUBTYPE(slots[i].flags)))
        atomic_fetch_sub_explicit(&device_bytes, slots[i].bytes, memory_order_relaxed);
    slots[i].pointer = 0;
    used--;
}

uint64_t pi_live_device_bytes(void)
{
    return atomic_load_explicit(&device_bytes, memory_order_relaxed);
}

void pi_live_alloc(uint16_t record_flags, uint64_t ts, uint64_t dur, uint64_t pointer,
                   uint64_t bytes, uint64_t where)
{
    /* a fork child must not inherit the table, nor a lock another thread held */
    static _Atomic int subscribed;
    if (__builtin_expect(!atomic_load_explicit(&subscribed, memory_order_relaxed), 0) &&
        !atomic_exchange(&subscribed, 1))
        pi_process_event_subscribe(PI_EVENT_FORK_CHILD, pi_live_after_fork);
    acquire();
    pi_emit(PI_REC_GPU_ALLOC, record_flags, ts, dur, pointer, bytes, where);
    if (pointer && !(record_flags & PI_FLAG_FAILED))
        remember(record_flags, pointer, bytes, where);
    release();
}

int pi_live_forget(uint64_t pointer, struct pi_live_saved *saved)
{
    if (!pointer)
        return 0;
    acquire();
    uint32_t i = probe(pointer);
    int live = slots[i].pointer != 0;
    if (live) {
        *saved = (struct pi_live_saved){slots[i].pointer, slots[i].bytes, slots[i].where,
                                        slots[i].flags};
        forget(pointer);
    }
    release();
    return live;
}

void pi_live_restore(const struct pi_live_saved *saved)
{
    acquire();
    remember(saved->flags, saved->pointer, saved->bytes, saved->where);
    release();
}

void pi_live_free(uint16_t record_flags, uint64_t ts, uint64_t dur, uint64_t pointer,
                  uint64_t bytes, uint64_t where)
{
    acquire();
    pi_emit(PI_REC_GPU_FREE, record_flags, ts, dur, pointer, bytes, where);
    release();
}

int pi_live_open_window(void)
{
    acquire();
    /* the opening time is read before the switch: a record that sees the switch
     * and ended before this time belongs to the pause and is dropped (pi_emit) */
    uint64_t now = pi_clock_ticks();
    atomic_store(&pi_recording, now ? now : 1);
    /* arg1: 1 when the window starts with every live allocation recorded */
    int complete = atomic_load(&missed) == 0;
    pi_emit(PI_REC_CAPTURE, 0, now, 0, 1, (uint64_t)complete, 0);
    for (uint32_t i = 0; i < SLOTS; i++) {
        const struct live_slot *s = &slots[i];
        if (s->pointer == 0)
            continue;
        uint16_t flags = (uint16_t)((s->flags & 0xffu) |
                                    (PI_CUDA_API_live_at_window_start << 8));
        pi_emit(PI_REC_GPU_ALLOC, flags, now, 0, s->pointer, s->bytes, s->where);
    }
    release();
    return complete ? 0 : -1;
}

/* Only written slots are cleared, so an untouched table stays unmapped. */
static void clear_table(void)
{
    for (uint32_t i = 0; used && i < SLOTS; i++)
        if (slots[i].pointer) {
            slots[i].pointer = 0;
            used--;
        }
    used = 0;
    atomic_store(&missed, 0);
    atomic_store(&device_bytes, 0);
}

void pi_live_after_fork(void)
{
    /* CUDA memory belongs to the parent's context: the child holds none */
    atomic_flag_clear(&lock); /* another thread of the parent may have held it */
    clear_table();
}

void pi_live_forget_all(void)
{
    acquire();
    clear_table();
    release();
}
