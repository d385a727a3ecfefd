/*
 * event_pairs.c - GPU time from event pairs (see event_pairs.h).
 *
 * The event pool and the queue of pending pairs take a mutex: timing costs
 * two event records per launch anyway. Pairs that cannot be queued, or that
 * are still pending when a window closes or the process ends, are counted
 * and written as one LOST record.
 */
#include "event_pairs.h"

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core/guard.h"
#include "core/loaded_symbols.h"
#include "core/real_functions.h"
#include "core/recorder.h"

#define PENDING_MAX 65536
#define POOL_MAX 8192

struct pending {
    uint64_t correlation;
    uint64_t host_end;
    CUevent start, end;
    CUcontext context;
};

static struct {
    CUresult (*event_create)(CUevent *, unsigned);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_record_pt)(CUevent, CUstream);
    CUresult (*event_query)(CUevent);
    CUresult (*elapsed)(float *, CUevent, CUevent);
    CUresult (*ctx_get)(CUcontext *);
    CUresult (*ctx_set)(CUcontext);
} drv;

static unsigned sample_every = 1;
static _Atomic uint64_t launches;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t resolving = PTHREAD_MUTEX_INITIALIZER; /* one resolver at a time */
static struct pending queue[PENDING_MAX];
static size_t queued;
static CUevent pool[POOL_MAX];
static size_t pooled;
static _Atomic uint64_t lost;

int pi_event_pairs_load(void)
{
    drv.event_create = (CUresult(*)(CUevent *, unsigned))pi_loaded_symbol("cuEventCreate");
    drv.event_record = (CUresult(*)(CUevent, CUstream))pi_loaded_symbol("cuEventRecord");
    drv.event_record_pt = (CUresult(*)(CUevent, CUstream))pi_loaded_symbol("cuEventRecord_ptsz");
    drv.event_query = (CUresult(*)(CUevent))pi_loaded_symbol("cuEventQuery");
    drv.elapsed = (CUresult(*)(float *, CUevent, CUevent))pi_loaded_symbol("cuEventElapsedTime_v2");
    if (!drv.elapsed)
        drv.elapsed =
            (CUresult(*)(float *, CUevent, CUevent))pi_loaded_symbol("cuEventElapsedTime");
    drv.ctx_get = (CUresult(*)(CUcontext *))pi_loaded_symbol("cuCtxGetCurrent");
    drv.ctx_set = (CUresult(*)(CUcontext))pi_loaded_symbol("cuCtxSetCurrent");
    return drv.event_create && drv.event_record && drv.event_query && drv.elapsed && drv.ctx_get &&
                   drv.ctx_set
               ? 0
               : -1;
}

void pi_event_pairs_sample(unsigned every)
{
    sample_every = every ? every : 1;
}

static CUevent take_event(void)
{
    CUevent event = NULL;
    PI_REAL(pthread_mutex_lock)(&lock);
    if (pooled)
        event = pool[--pooled];
    pthread_mutex_unlock(&lock);
    if (!event && drv.event_create(&event, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
        event = NULL;
    return event;
}

static void give_event(CUevent event)
{
    PI_REAL(pthread_mutex_lock)(&lock);
    if (pooled < POOL_MAX)
        pool[pooled++] = event;
    pthread_mutex_unlock(&lock);
}

/* Record @event on the pair's stream, in the stream flavour the launch used. */
static CUresult record_on(const struct pi_gpu_pair *pair, CUevent event)
{
    if (pair->per_thread_stream && drv.event_record_pt)
        return drv.event_record_pt(event, (CUstream)pair->stream);
    return drv.event_record(event, (CUstream)pair->stream);
}

void pi_event_pairs_start(struct pi_gpu_pair *pair)
{
    if (sample_every > 1 && atomic_fetch_add(&launches, 1) % sample_every != 0)
        return;
    int guard = pi_guard_enter();
    CUevent event = take_event();
    if (event && record_on(pair, event) == CUDA_SUCCESS)
        pair->start_event = event;
    else if (event)
        give_event(event);
    pi_guard_restore(guard);
}

void pi_event_pairs_finish(struct pi_gpu_pair *pair, uint64_t correlation, int failed)
{
    if (!pair->start_event)
        return;
    int guard = pi_guard_enter();
    CUevent end = failed ? NULL : take_event();
    CUcontext context = NULL;
    if (end && record_on(pair, end) == CUDA_SUCCESS && drv.ctx_get(&context) == CUDA_SUCCESS) {
        PI_REAL(pthread_mutex_lock)(&lock);
        if (queued < PENDING_MAX) {
            queue[queued++] = (struct pending){correlation, pi_clock_ticks(), pair->start_event,
                                               end, context};
            end = NULL;
            pair->start_event = NULL;
        }
        pthread_mutex_unlock(&lock);
        if (end)
            atomic_fetch_add(&lost, 1);
    }
    if (end)
        give_event(end);
    if (pair->start_event)
        give_event(pair->start_event);
    pair->start_event = NULL;
    pi_guard_restore(guard);
}

/* Resolve the pairs whose end has been reached; keep (or with @give_up, count) the others. */
static void resolve(int give_up)
{
    static struct pending batch[PENDING_MAX];
    double ticks_per_ms = pi_recorder_ticks_per_second() / 1000.0;
    PI_REAL(pthread_mutex_lock)(&resolving);
    PI_REAL(pthread_mutex_lock)(&lock);
    size_t n = queued;
    memcpy(batch, queue, n * sizeof(batch[0]));
    queued = 0;
    pthread_mutex_unlock(&lock);
    CUcontext current = NULL;
    for (size_t i = 0; i < n; i++) {
        struct pending *p = &batch[i];
        if (p->context != current && drv.ctx_set(p->context) == CUDA_SUCCESS)
            current = p->context;
        CUresult state = drv.event_query(p->end);
        if (state == CUDA_ERROR_NOT_READY && !give_up) {
            PI_REAL(pthread_mutex_lock)(&lock);
            if (queued < PENDING_MAX)
                queue[queued++] = *p;
            pthread_mutex_unlock(&lock);
            continue;
        }
        float ms = 0;
        if (state == CUDA_SUCCESS && drv.elapsed(&ms, p->start, p->end) == CUDA_SUCCESS)
            pi_emit(PI_REC_GPU_TIME, 0, p->host_end, (uint64_t)((double)ms * ticks_per_ms),
                    p->correlation, PI_GPU_TIMING_EVENTS, 0);
        else
            atomic_fetch_add(&lost, 1);
        give_event(p->start);
        give_event(p->end);
    }
    uint64_t count = atomic_exchange(&lost, 0);
    if (count)
        pi_emit(PI_REC_LOST, 0, pi_clock_ticks(), 0, count, PI_LOST_GPU_TIME, 0);
    pthread_mutex_unlock(&resolving);
}

void pi_event_pairs_resolve(void)
{
    resolve(0);
}

void pi_event_pairs_close(void)
{
    resolve(1);
}

void pi_event_pairs_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lock = fresh;
    resolving = fresh;
    queued = 0;
    pooled = 0;
    atomic_store(&lost, 0);
}
