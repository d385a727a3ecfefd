/*
 * gpu_timing.c - GPU-side durations (see gpu_timing.h).
 *
 * Chosen once per process, on the first timed launch, and written down as
 * a GPU_TIMING record:
 *   1. CUPTI's activity API, when libcupti loads and activity recording
 *      can be enabled (cupti_source.c);
 *   2. event pairs around launches and copies on their own stream, resolved
 *      by a thread of ours off the application's path;
 *   3. absent, with the reason (no driver loaded, events unusable).
 *
 * PROFINJECT_GPU_TIMING=auto|cupti|events|off, PROFINJECT_GPU_SAMPLE=N times
 * every Nth launch (default 1). The event pool and the queue of pending
 * pairs take a mutex: timing costs two event records per launch anyway.
 */
#include "gpu_timing.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/background_thread.h"
#include "cuda_common.h"
#include "cupti_source.h"
#include "core/diagnostics.h"
#include "core/process_events.h"
#include "core/guard.h"
#include "core/real_functions.h"
#include "core/recorder.h"

#define PENDING_MAX 65536
#define POOL_MAX 8192
#define RESOLVE_PERIOD_NS 2000000
#define CUPTI_FLUSH_PERIOD 50 /* resolver rounds: 100 ms */

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

static _Atomic int decided;
static pthread_mutex_t choice_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned undecided_launches;
/* The first launch may come before the runtime has loaded the driver:
 * wait this many launches for libcuda.so.1 before deciding without it. */
#define LAUNCHES_BEFORE_DRIVER 1000
static int source = PI_GPU_TIMING_ABSENT;
static unsigned sample_every = 1;
static _Atomic uint64_t launches;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending queue[PENDING_MAX];
static size_t queued;
static CUevent pool[POOL_MAX];
static size_t pooled;
static _Atomic uint64_t dropped;

static void emit_choice(int chosen, uint64_t code, const char *reason)
{
    int guard = pi_guard_enter();
    uint32_t id = pi_intern_cstr(reason);
    pi_guard_restore(guard);
    pi_emit(PI_REC_GPU_TIMING, 0, pi_clock_ticks(), 0, (uint64_t)chosen, code, id);
}

static void *resolver(void *unused);
static void choose(void);

/* Decide the source once the driver is there (or has long not come). */
static void decide(void)
{
    PI_REAL(pthread_mutex_lock)(&choice_lock);
    if (!atomic_load(&decided)) {
        /* from the first launch on, the end, an exec and a fork child concern us */
        pi_process_event_subscribe(PI_EVENT_END, pi_gpu_timing_drain);
        pi_process_event_subscribe(PI_EVENT_BEFORE_EXEC, pi_gpu_timing_drain);
        pi_process_event_subscribe(PI_EVENT_FORK_CHILD, pi_gpu_timing_after_fork);
        int guard = pi_guard_enter();
        void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        pi_guard_restore(guard);
        if (driver || ++undecided_launches >= LAUNCHES_BEFORE_DRIVER) {
            choose();
            atomic_store(&decided, 1);
        }
        if (driver)
            dlclose(driver);
    }
    pthread_mutex_unlock(&choice_lock);
}

/* The resolver (events) or flusher (CUPTI) thread. */
static int start_thread(void)
{
    return pi_background_thread(resolver, NULL);
}

static void choose(void)
{
    int guard = pi_guard_enter();
    const char *mode = getenv("PROFINJECT_GPU_TIMING");
    const char *sample = getenv("PROFINJECT_GPU_SAMPLE");
    if (sample && atoi(sample) > 0)
        sample_every = (unsigned)atoi(sample);
    char reason[300];
    if (mode && strcmp(mode, "off") == 0) {
        emit_choice(PI_GPU_TIMING_ABSENT, 0, "GPU timing turned off (PROFINJECT_GPU_TIMING=off)");
        pi_guard_restore(guard);
        return;
    }
    int events_only = mode && strcmp(mode, "events") == 0;
    int cupti = events_only ? -1 : pi_cupti_start(reason, sizeof(reason));
    if (events_only)
        snprintf(reason, sizeof(reason), "event pairs asked for (PROFINJECT_GPU_TIMING=events)");
    if (cupti == 0) {
        if (start_thread() == 0) {
            source = PI_GPU_TIMING_CUPTI;
            emit_choice(PI_GPU_TIMING_CUPTI, 0, reason);
        } else {
            emit_choice(PI_GPU_TIMING_ABSENT, 0, "cannot start the GPU timing thread");
        }
        pi_guard_restore(guard);
        return;
    }
    drv.event_create = (CUresult(*)(CUevent *, unsigned))pi_cuda_symbol("cuEventCreate");
    drv.event_record = (CUresult(*)(CUevent, CUstream))pi_cuda_symbol("cuEventRecord");
    drv.event_record_pt = (CUresult(*)(CUevent, CUstream))pi_cuda_symbol("cuEventRecord_ptsz");
    drv.event_query = (CUresult(*)(CUevent))pi_cuda_symbol("cuEventQuery");
    drv.elapsed = (CUresult(*)(float *, CUevent, CUevent))pi_cuda_symbol("cuEventElapsedTime_v2");
    if (!drv.elapsed)
        drv.elapsed = (CUresult(*)(float *, CUevent, CUevent))pi_cuda_symbol("cuEventElapsedTime");
    drv.ctx_get = (CUresult(*)(CUcontext *))pi_cuda_symbol("cuCtxGetCurrent");
    drv.ctx_set = (CUresult(*)(CUcontext))pi_cuda_symbol("cuCtxSetCurrent");
    if (!drv.event_create || !drv.event_record || !drv.event_query || !drv.elapsed ||
        !drv.ctx_get || !drv.ctx_set) {
        char absent[400];
        snprintf(absent, sizeof(absent), "no usable CUDA driver (libcuda.so.1 event API not found); %s",
                 reason);
        emit_choice(PI_GPU_TIMING_ABSENT, (uint64_t)(int64_t)cupti, absent);
        pi_guard_restore(guard);
        return;
    }
    if (start_thread() == 0) {
        source = PI_GPU_TIMING_EVENTS;
        emit_choice(PI_GPU_TIMING_EVENTS, (uint64_t)(int64_t)cupti, reason);
    } else {
        emit_choice(PI_GPU_TIMING_ABSENT, 0, "cannot start the GPU timing thread");
    }
    pi_guard_restore(guard);
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

void pi_gpu_timing_start(struct pi_gpu_pair *pair, const void *stream, int per_thread_stream,
                         uint64_t correlation)
{
    pair->start_event = NULL;
    pair->stream = stream;
    pair->per_thread_stream = per_thread_stream;
    pair->correlation_pushed = 0;
    if (__builtin_expect(!atomic_load_explicit(&decided, memory_order_acquire), 0))
        decide();
    if (source == PI_GPU_TIMING_CUPTI) {
        int guard = pi_guard_enter();
        pi_cupti_push(correlation);
        pi_guard_restore(guard);
        pair->correlation_pushed = 1;
        return;
    }
    if (source != PI_GPU_TIMING_EVENTS)
        return;
    if (sample_every > 1 && atomic_fetch_add(&launches, 1) % sample_every != 0)
        return;
    int guard = pi_guard_enter();
    CUevent event = take_event();
    if (event && record_on(pair, event) == CUDA_SUCCESS) {
        pair->start_event = event;
    } else if (event) {
        give_event(event);
    }
    pi_guard_restore(guard);
}

void pi_gpu_timing_finish(struct pi_gpu_pair *pair, uint64_t correlation, int failed)
{
    if (pair->correlation_pushed) {
        int guard = pi_guard_enter();
        pi_cupti_pop();
        pi_guard_restore(guard);
        pair->correlation_pushed = 0;
        return;
    }
    if (!pair->start_event)
        return;
    int guard = pi_guard_enter();
    CUevent end = failed ? NULL : take_event();
    CUcontext context = NULL;
    if (end && record_on(pair, end) == CUDA_SUCCESS &&
        drv.ctx_get(&context) == CUDA_SUCCESS) {
        PI_REAL(pthread_mutex_lock)(&lock);
        if (queued < PENDING_MAX) {
            queue[queued++] = (struct pending){correlation, pi_clock_ticks(), pair->start_event, end,
                                               context};
            end = NULL;
            pair->start_event = NULL;
        }
        pthread_mutex_unlock(&lock);
        if (end)
            atomic_fetch_add(&dropped, 1);
    }
    if (end)
        give_event(end);
    if (pair->start_event)
        give_event(pair->start_event);
    pair->start_event = NULL;
    pi_guard_restore(guard);
}

/* Resolve the pairs whose end has been reached; keep the others. */
static void resolve_ready(double ticks_per_ms)
{
    static struct pending batch[PENDING_MAX];
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
        if (state == CUDA_ERROR_NOT_READY) {
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
        give_event(p->start);
        give_event(p->end);
    }
}

static void *resolver(void *unused)
{
    (void)unused;
    pi_guard_enter(); /* our CUDA calls are not the application's */
    for (unsigned round = 1;; round++) {
        struct timespec pause = {0, RESOLVE_PERIOD_NS};
        nanosleep(&pause, NULL);
        if (source == PI_GPU_TIMING_CUPTI) {
            if (round % CUPTI_FLUSH_PERIOD == 0)
                pi_cupti_flush();
            continue;
        }
        resolve_ready(pi_recorder_ticks_per_second() / 1000.0);
    }
    return NULL;
}

void pi_gpu_timing_drain(void)
{
    /* launches happened but no driver ever came: say so before the trace closes */
    if (!atomic_load(&decided) && undecided_launches > 0) {
        PI_REAL(pthread_mutex_lock)(&choice_lock);
        if (!atomic_load(&decided)) {
            choose();
            atomic_store(&decided, 1);
        }
        pthread_mutex_unlock(&choice_lock);
    }
    int guard = pi_guard_enter();
    if (source == PI_GPU_TIMING_CUPTI)
        pi_cupti_flush();
    else if (source == PI_GPU_TIMING_EVENTS)
        resolve_ready(pi_recorder_ticks_per_second() / 1000.0);
    pi_guard_restore(guard);
}

void pi_gpu_timing_after_fork(void)
{
    /* CUDA cannot be used in a fork child; its launches go untimed */
    source = PI_GPU_TIMING_ABSENT;
    queued = 0;
    pooled = 0;
}
