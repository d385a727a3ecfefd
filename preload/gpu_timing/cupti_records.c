/*
 * cupti_records.c - CUPTI's activity buffers into GPU_TIME and LOST records
 * (see cupti_records.h). Buffers come on CUPTI's worker thread or on the
 * thread that flushes; one lock serialises them.
 *
 * A GPU record may come before the API record of its call (they share
 * buffers in no promised order): it waits, a bounded number of them. A
 * call that is none of ours (untimed, or an entry point we do not wrap)
 * has no launch record to time, so its GPU work is left out, not lost.
 */
#include "cupti_records.h"

#include <cupti.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "call_ring.h"
#include "core/guard.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "cupti_api.h"

#define BUFFER_SIZE (1u << 20)
#define MAP_SLOTS 65536u   /* CUPTI correlation id -> our call, recent ones */
#define WAITING_MAX 65536u /* GPU records whose API record has not come yet */
#define NAME_SLOTS 4096u
#define OWN_CLOCK_BASE_NS 1000000000ull

enum { CALL_EMPTY = 0, CALL_OURS, CALL_NOT_OURS };

struct mapping {
    uint32_t cupti;
    uint8_t state;
    uint8_t part; /* a graph launch: each of its kernels is a part */
    uint64_t ours;
};

struct waiting {
    uint32_t cupti, name;
    uint64_t start, end;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct mapping calls[MAP_SLOTS];
static struct waiting waiting[WAITING_MAX]; /* a ring: the oldest at waiting_first */
static size_t waiting_first, waiting_count;
static uint64_t lost;
static int threads_by_pthread;

static struct {
    _Atomic uint64_t pointer;
    uint32_t id;
} names[NAME_SLOTS];

/* CUPTI timestamps -> our ticks. With our clock behind CUPTI's timestamps,
 * nanoseconds are ticks at one fixed rate, so CUPTI's times and durations
 * turn back into ticks exactly whatever that rate's error. */
static struct {
    int own;
    uint64_t origin_ticks;
    double ns_per_tick, ticks_per_ns;
    uint64_t pair_cupti, pair_ticks; /* CUPTI's default clock */
} clock_map;

/* ---- clocks ---- */

static _Atomic int clock_handed_back;

uint64_t CUPTIAPI pi_cupti_records_timestamp(void)
{
    if (__builtin_expect(atomic_load_explicit(&clock_handed_back, memory_order_relaxed), 0))
        return pi_clock_ns(CLOCK_REALTIME);
    return OWN_CLOCK_BASE_NS +
           (uint64_t)((double)(pi_clock_ticks() - clock_map.origin_ticks) * clock_map.ns_per_tick);
}

void pi_cupti_records_clock_handed_back(void)
{
    atomic_store(&clock_handed_back, 1);
}

/* CUPTI's own clock is CLOCK_REALTIME nanoseconds: one pair of readings
 * and our clock's best known rate, both renewed at each flush. */
void pi_cupti_records_before_flush(void)
{
    if (clock_map.own)
        return;
    uint64_t cupti = 0;
    pi_cupti.timestamp(&cupti);
    uint64_t ticks = pi_clock_ticks();
    double ticks_per_ns = pi_recorder_ticks_per_second() / 1e9;
    PI_REAL(pthread_mutex_lock)(&lock);
    clock_map.pair_cupti = cupti;
    clock_map.pair_ticks = ticks;
    clock_map.ticks_per_ns = ticks_per_ns;
    pthread_mutex_unlock(&lock);
}

void pi_cupti_records_clock(int own_clock)
{
    atomic_store(&clock_handed_back, 0);
    double ticks_per_second = pi_recorder_ticks_per_second();
    clock_map.own = own_clock;
    clock_map.origin_ticks = pi_clock_ticks();
    clock_map.ns_per_tick = 1e9 / ticks_per_second;
    clock_map.ticks_per_ns = ticks_per_second / 1e9;
    pi_cupti_records_before_flush();
}

static uint64_t ticks_of(uint64_t cupti)
{
    if (clock_map.own)
        return clock_map.origin_ticks +
               (uint64_t)((double)(int64_t)(cupti - OWN_CLOCK_BASE_NS) * clock_map.ticks_per_ns);
    return clock_map.pair_ticks +
           (uint64_t)((double)(int64_t)(cupti - clock_map.pair_cupti) * clock_map.ticks_per_ns);
}

void pi_cupti_records_thread_ids(int by_pthread)
{
    threads_by_pthread = by_pthread;
}

/* ---- CUPTI's calls -> ours ---- */

static struct mapping *call_of(uint32_t cupti)
{
    struct mapping *m = &calls[cupti % MAP_SLOTS];
    return m->state != CALL_EMPTY && m->cupti == cupti ? m : NULL;
}

static int is_graph_launch(const CUpti_ActivityAPI *a)
{
    if (a->kind == CUPTI_ACTIVITY_KIND_RUNTIME)
        return a->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
               a->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
    return a->cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
           a->cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

static void api_record(const CUpti_ActivityAPI *a)
{
    uint64_t ours = 0;
    enum pi_call_lookup found = pi_call_ring_find(a->threadId, threads_by_pthread,
                                                  ticks_of(a->start), ticks_of(a->end), &ours);
    if (found == PI_CALL_GONE)
        lost++; /* a call of ours, older than its thread's ring still holds */
    calls[a->correlationId % MAP_SLOTS] = (struct mapping){
        a->correlationId, found == PI_CALL_FOUND ? CALL_OURS : CALL_NOT_OURS,
        (uint8_t)is_graph_launch(a), ours};
}

static uint32_t name_id(const char *name)
{
    if (!name)
        return 0;
    uintptr_t key = (uintptr_t)name;
    for (unsigned probe = 0; probe < 16; probe++) {
        unsigned slot = (unsigned)((key >> 4) + probe) % NAME_SLOTS;
        uint64_t seen = atomic_load_explicit(&names[slot].pointer, memory_order_relaxed);
        if (seen == key)
            return names[slot].id;
        if (seen == 0) {
            names[slot].id = pi_intern_cstr(name);
            atomic_store_explicit(&names[slot].pointer, key, memory_order_relaxed);
            return names[slot].id;
        }
    }
    return pi_intern_cstr(name);
}

/* GPU work of CUPTI call @cupti: timed, lost, left out, or waiting for its call. */
static int gpu_work(uint32_t cupti, uint64_t start, uint64_t end, uint32_t name)
{
    struct mapping *m = call_of(cupti);
    if (!m)
        return 0;
    if (m->state == CALL_OURS) {
        if (start == 0 || end < start)
            lost++; /* not finished when the buffer was flushed */
        else
            pi_emit(PI_REC_GPU_TIME, m->part ? PI_GPU_TIME_PART : 0, ticks_of(start),
                    (uint64_t)((double)(end - start) * clock_map.ticks_per_ns), m->ours,
                    PI_GPU_TIMING_CUPTI, name);
    }
    return 1;
}

/* A GPU record whose call has not shown yet. The oldest gives way when full:
 * API records come within a buffer or two of their work, so one that never
 * came belongs to an entry point we do not wrap, not to a launch of ours. */
static void wait_for_call(uint32_t cupti, uint64_t start, uint64_t end, uint32_t name)
{
    if (waiting_count == WAITING_MAX) {
        waiting_first = (waiting_first + 1) % WAITING_MAX;
        waiting_count--;
    }
    waiting[(waiting_first + waiting_count++) % WAITING_MAX] =
        (struct waiting){cupti, name, start, end};
}

static void retry_waiting(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < waiting_count; i++) {
        struct waiting w = waiting[(waiting_first + i) % WAITING_MAX];
        if (!gpu_work(w.cupti, w.start, w.end, w.name))
            waiting[(waiting_first + kept++) % WAITING_MAX] = w;
    }
    waiting_count = kept;
}

static void one_record(const CUpti_Activity *record)
{
    uint32_t cupti;
    uint64_t start, end;
    uint32_t name = 0;
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        api_record((const CUpti_ActivityAPI *)record);
        return;
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        /* start, end, correlationId and name sit where they did in every
         * version of the kernel record (CUpti_ActivityKernel4 to 10) */
        const CUpti_ActivityKernel10 *k = (const void *)record;
        cupti = k->correlationId, start = k->start, end = k->end, name = name_id(k->name);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)record;
        cupti = m->correlationId, start = m->start, end = m->end;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)record;
        cupti = m->correlationId, start = m->start, end = m->end;
        break;
    }
    default:
        return;
    }
    if (!gpu_work(cupti, start, end, name))
        wait_for_call(cupti, start, end, name);
}

/* Durations of ours that will not come: one LOST record for all counted so far. */
static void report_lost(void)
{
    size_t dropped = 0;
    if (pi_cupti.dropped(NULL, 0, &dropped) == CUPTI_SUCCESS)
        lost += dropped; /* CUPTI had no buffer space for them */
    lost += pi_call_ring_missed();
    if (lost)
        pi_emit(PI_REC_LOST, 0, pi_clock_ticks(), 0, lost, PI_LOST_GPU_TIME, 0);
    lost = 0;
}

/* Buffers handed back are kept for the next request: no allocation, no page
 * faults of a fresh megabyte, each time CUPTI fills one. */
#define SPARE_BUFFERS 8
static uint8_t *spare[SPARE_BUFFERS];
static unsigned spare_count;
static atomic_flag spare_lock = ATOMIC_FLAG_INIT;

static uint8_t *take_spare(void)
{
    while (atomic_flag_test_and_set_explicit(&spare_lock, memory_order_acquire))
        ;
    uint8_t *buffer = spare_count ? spare[--spare_count] : NULL;
    atomic_flag_clear_explicit(&spare_lock, memory_order_release);
    return buffer;
}

static void give_spare(uint8_t *buffer)
{
    while (atomic_flag_test_and_set_explicit(&spare_lock, memory_order_acquire))
        ;
    if (spare_count < SPARE_BUFFERS) {
        spare[spare_count++] = buffer;
        buffer = NULL;
    }
    atomic_flag_clear_explicit(&spare_lock, memory_order_release);
    free(buffer);
}

void CUPTIAPI pi_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    int saved = errno;
    *buffer = take_spare();
    if (!*buffer)
        *buffer = aligned_alloc(8, BUFFER_SIZE);
    *size = *buffer ? BUFFER_SIZE : 0; /* none: CUPTI drops and counts, reported as lost */
    *max_records = 0;
    errno = saved;
}

void CUPTIAPI pi_cupti_buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid)
{
    (void)context, (void)stream, (void)size;
    int saved = errno;
    int guard = pi_guard_enter();
    PI_REAL(pthread_mutex_lock)(&lock);
    CUpti_Activity *record = NULL;
    while (valid && pi_cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS)
        one_record(record);
    retry_waiting();
    report_lost();
    pthread_mutex_unlock(&lock);
    give_spare(buffer);
    pi_guard_restore(guard);
    errno = saved;
}

void pi_cupti_records_close(void)
{
    PI_REAL(pthread_mutex_lock)(&lock);
    retry_waiting();
    waiting_count = 0; /* their calls never showed: none of ours */
    report_lost();
    pthread_mutex_unlock(&lock);
}

void pi_cupti_records_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lock = fresh;
    atomic_flag_clear(&spare_lock);
    waiting_count = 0;
    lost = 0;
}
