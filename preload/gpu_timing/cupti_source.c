/*
 * cupti_source.c - the CUPTI session (see cupti_source.h).
 *
 * What cupti_activity.h and cupti_callbacks.h ask of a client, and why:
 * - subscribe first: one subscriber at a time, and a tool already holding
 *   CUPTI (torch.profiler, Nsight Systems) answers
 *   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; then event pairs time
 *   the launches instead, and the trace says which tool was there;
 * - CONCURRENT_KERNEL, not KERNEL, which serialises kernels;
 * - a timestamp callback registered before any kind is enabled makes
 *   every CUPTI timestamp one of our clock, so API records and our calls
 *   compare exactly (cuptiActivityRegisterTimestampCallback);
 * - API records only for the entry points we time: the RUNTIME and DRIVER
 *   kinds on, every id off, ours on (cuptiActivityEnableRuntimeApi /
 *   EnableDriverApi filter within an enabled kind), kernel-level thread
 *   ids (cuptiSetThreadIdType SYSTEM, gettid) to find the thread;
 * - flush: cuptiActivityFlushAll(0) hands over only buffers whose records
 *   are all complete; CUPTI_ACTIVITY_FLAG_FLUSH_FORCED hands over the rest
 *   too, unfinished records with zero timestamps, for the end of a session.
 * No push or pop of external correlation ids: two CUPTI calls per launch,
 * and their records exist only beside API records anyway.
 */
#include "cupti_source.h"

#include <pthread.h>
#include <stdio.h>

#include "core/guard.h"
#include "core/real_functions.h"
#include "cupti_api.h"
#include "cupti_records.h"

static const CUpti_ActivityKind gpu_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

#define RUNTIME(name) CUPTI_RUNTIME_TRACE_CBID_##name
#define DRIVER(name) CUPTI_DRIVER_TRACE_CBID_##name
/* The runtime calls we time (cuda_runtime_hooks.c, cuda_runtime_copy_hooks.c); also what runtimes
 * linked statically into libraries call before reaching our driver hooks. */
static const CUpti_CallbackId runtime_calls[] = {
    RUNTIME(cudaLaunchKernel_v7000),        RUNTIME(cudaLaunchKernel_ptsz_v7000),
    RUNTIME(cudaLaunchCooperativeKernel_v9000), RUNTIME(cudaLaunchCooperativeKernel_ptsz_v9000),
    RUNTIME(cudaLaunchKernelExC_v11060),    RUNTIME(cudaLaunchKernelExC_ptsz_v11060),
    RUNTIME(__cudaLaunchKernel_v13000),     RUNTIME(__cudaLaunchKernel_ptsz_v13000),
    RUNTIME(cudaGraphLaunch_v10000),        RUNTIME(cudaGraphLaunch_ptsz_v10000),
    RUNTIME(cudaMemcpy_v3020),              RUNTIME(cudaMemcpy_ptds_v7000),
    RUNTIME(cudaMemcpyAsync_v3020),         RUNTIME(cudaMemcpyAsync_ptsz_v7000),
    RUNTIME(cudaMemcpyPeerAsync_v4000),     RUNTIME(cudaMemcpyToSymbol_v3020),
    RUNTIME(cudaMemcpyToSymbol_ptds_v7000),
    RUNTIME(cudaMemcpy2D_v3020),            RUNTIME(cudaMemcpy2D_ptds_v7000),
    RUNTIME(cudaMemcpy2DAsync_v3020),       RUNTIME(cudaMemcpy2DAsync_ptsz_v7000),
    RUNTIME(cudaMemset_v3020),              RUNTIME(cudaMemset_ptds_v7000),
    RUNTIME(cudaMemsetAsync_v3020),         RUNTIME(cudaMemsetAsync_ptsz_v7000),
};
/* The driver calls we time (driver_launch_hooks.c). */
static const CUpti_CallbackId driver_calls[] = {
    DRIVER(cuLaunchKernel),          DRIVER(cuLaunchKernel_ptsz),
    DRIVER(cuLaunchKernelEx),        DRIVER(cuLaunchKernelEx_ptsz),
    DRIVER(cuLaunchCooperativeKernel), DRIVER(cuLaunchCooperativeKernel_ptsz),
    DRIVER(cuGraphLaunch),           DRIVER(cuGraphLaunch_ptsz),
    DRIVER(cuMemcpy),                DRIVER(cuMemcpy_ptds),
    DRIVER(cuMemcpyAsync),           DRIVER(cuMemcpyAsync_ptsz),
    DRIVER(cuMemcpyHtoD_v2),         DRIVER(cuMemcpyHtoD_v2_ptds),
    DRIVER(cuMemcpyDtoH_v2),         DRIVER(cuMemcpyDtoH_v2_ptds),
    DRIVER(cuMemcpyDtoD_v2),         DRIVER(cuMemcpyDtoD_v2_ptds),
    DRIVER(cuMemcpyHtoDAsync_v2),    DRIVER(cuMemcpyHtoDAsync_v2_ptsz),
    DRIVER(cuMemcpyDtoHAsync_v2),    DRIVER(cuMemcpyDtoHAsync_v2_ptsz),
    DRIVER(cuMemcpyDtoDAsync_v2),    DRIVER(cuMemcpyDtoDAsync_v2_ptsz),
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static CUpti_SubscriberHandle subscriber;
static int running, paused;
/* The timing thread's periodic flush and the pause, stop and exit calls of
 * other threads take turns: a flush must not reach CUPTI between the
 * disables and the unsubscribe, nor while the record state is closed. */
static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
/* CUPTI's settings as the session found them, given back when it ends */
static CUpti_ActivityThreadIdType thread_ids_before = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;

static void CUPTIAPI no_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                 const void *info)
{
    (void)data, (void)domain, (void)id, (void)info;
}

/* Hold CUPTI's one subscription, or say who holds it. */
static CUptiResult subscribe(char *holder, size_t size)
{
    holder[0] = '\0';
    if (pi_cupti.subscribe_v2) {
        CUpti_SubscriberParams params = {0};
        params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        params.subscriberName = "profinject";
        params.oldSubscriberName = holder;
        params.oldSubscriberSize = size;
        return pi_cupti.subscribe_v2(&subscriber, no_callback, NULL, &params);
    }
    return pi_cupti.subscribe ? pi_cupti.subscribe(&subscriber, no_callback, NULL) : CUPTI_SUCCESS;
}

/* Ids a newer CUPTI may have beyond our header's: switched off too. */
#define NEWER_IDS 512

/* Each id of @api off, then ours on: the per-id switches filter within a
 * kind that is enabled. Measured with CUDA 13.0 (driver 580) on an H200: ids
 * switched on while their kind was off gave no record at all. */
static void only(CUptiResult(CUPTIAPI *api)(CUpti_CallbackId, uint8_t), CUpti_CallbackId size,
                 const CUpti_CallbackId *ours, size_t count)
{
    for (CUpti_CallbackId id = 1; id < size + NEWER_IDS; id++)
        api(id, 0); /* an id this CUPTI does not know is refused, harmlessly */
    for (size_t i = 0; i < count; i++)
        api(ours[i], 1);
}

/* API records of the calls we time: one by one where CUPTI can, else all of them. */
static CUptiResult api_records(uint8_t on)
{
    CUptiResult (*change)(CUpti_ActivityKind) = on ? pi_cupti.enable : pi_cupti.disable;
    CUptiResult r = change(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (r == CUPTI_SUCCESS)
        r = change(CUPTI_ACTIVITY_KIND_DRIVER);
    if (r != CUPTI_SUCCESS || !on || !pi_cupti.runtime_api || !pi_cupti.driver_api)
        return r;
    only(pi_cupti.runtime_api, CUPTI_RUNTIME_TRACE_CBID_SIZE, runtime_calls, COUNT(runtime_calls));
    only(pi_cupti.driver_api, CUPTI_DRIVER_TRACE_CBID_SIZE, driver_calls, COUNT(driver_calls));
    return CUPTI_SUCCESS;
}

static CUptiResult recording(int on)
{
    if (!on) {
        for (size_t i = 0; i < COUNT(gpu_kinds); i++)
            pi_cupti.disable(gpu_kinds[i]);
        return api_records(0);
    }
    CUptiResult r = CUPTI_SUCCESS;
    size_t enabled = 0;
    while (enabled < COUNT(gpu_kinds) && (r = pi_cupti.enable(gpu_kinds[enabled])) == CUPTI_SUCCESS)
        enabled++;
    if (r == CUPTI_SUCCESS)
        r = api_records(1);
    if (r != CUPTI_SUCCESS)
        for (size_t i = 0; i < enabled; i++)
            pi_cupti.disable(gpu_kinds[i]);
    return r;
}

int pi_cupti_start(char *reason, size_t size)
{
    if (pi_cupti_load(reason, size) != 0)
        return -1;
    const char *other = pi_cupti_other_client();
    if (other) {
        snprintf(reason, size, "another CUPTI client came first (it called %s)", other);
        return -1;
    }
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN], text[160];
    CUptiResult r = subscribe(holder, sizeof(holder));
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        snprintf(reason, size, "CUPTI is held by another client (%s)",
                 holder[0] ? holder : "a profiler or debugger");
        return (int)r;
    }
    if (r != CUPTI_SUCCESS) {
        snprintf(reason, size, "CUPTI refused a subscriber: %s",
                 pi_cupti_error_text(r, text, sizeof(text)));
        return (int)r;
    }
    int own_clock = pi_cupti.timestamp_callback &&
                    pi_cupti.timestamp_callback(pi_cupti_records_timestamp) == CUPTI_SUCCESS;
    pi_cupti_records_clock(own_clock);
    if (pi_cupti.get_thread_id_type)
        pi_cupti.get_thread_id_type(&thread_ids_before);
    int by_kernel_id = pi_cupti.thread_id_type &&
                       pi_cupti.thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) == CUPTI_SUCCESS;
    pi_cupti_records_thread_ids(!by_kernel_id);
    r = pi_cupti.register_callbacks(pi_cupti_buffer_requested, pi_cupti_buffer_completed);
    if (r == CUPTI_SUCCESS)
        r = recording(1);
    if (r != CUPTI_SUCCESS) {
        if (pi_cupti.unsubscribe && subscriber)
            pi_cupti.unsubscribe(subscriber);
        subscriber = NULL;
        snprintf(reason, size, "CUPTI refused activity recording: %s",
                 pi_cupti_error_text(r, text, sizeof(text)));
        return (int)r;
    }
    running = 1;
    snprintf(reason, size, "CUPTI activity API%s", own_clock ? "" : " (CUPTI's clock, mapped)");
    return 0;
}

static void flush_locked(int forced)
{
    int guard = pi_guard_enter();
    pi_cupti_records_before_flush();
    pi_cupti.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    pi_guard_restore(guard);
}

void pi_cupti_flush(int forced)
{
    PI_REAL(pthread_mutex_lock)(&session_lock);
    if (running)
        flush_locked(forced);
    pthread_mutex_unlock(&session_lock);
}

void pi_cupti_pause(void)
{
    PI_REAL(pthread_mutex_lock)(&session_lock);
    if (running && !paused) {
        flush_locked(1);
        int guard = pi_guard_enter();
        recording(0);
        pi_guard_restore(guard);
        pi_cupti_records_close();
        paused = 1;
    }
    pthread_mutex_unlock(&session_lock);
}

void pi_cupti_resume(void)
{
    PI_REAL(pthread_mutex_lock)(&session_lock);
    if (running && paused) {
        int guard = pi_guard_enter();
        paused = recording(1) != CUPTI_SUCCESS;
        pi_guard_restore(guard);
    }
    pthread_mutex_unlock(&session_lock);
}

void pi_cupti_stop(void)
{
    PI_REAL(pthread_mutex_lock)(&session_lock);
    if (running) {
        flush_locked(1);
        int guard = pi_guard_enter();
        if (!paused)
            recording(0);
        if (pi_cupti.unsubscribe && subscriber)
            pi_cupti.unsubscribe(subscriber);
        /* whoever uses CUPTI next finds it as it was */
        if (pi_cupti.thread_id_type)
            pi_cupti.thread_id_type(thread_ids_before);
        pi_cupti_records_clock_handed_back();
        pi_guard_restore(guard);
        subscriber = NULL;
        running = 0;
        pi_cupti_records_close();
    }
    pthread_mutex_unlock(&session_lock);
}

void pi_cupti_after_fork(void)
{
    pthread_mutex_init(&session_lock, NULL); /* a thread that held it is gone */
    running = paused = 0;
    subscriber = NULL;
    pi_cupti_records_after_fork();
}
