/*
 * gpu_timing.h - GPU-side durations of launches and copies.
 *
 * Chosen once per process, at its first timed call, and written down as a
 * GPU_TIMING record with the reason a better source is not used:
 *   1. CUPTI's activity API (cupti_source.h): hooks only note each call's
 *      start and end in a per-thread ring;
 *   2. event pairs on the launch's stream (event_pairs.h), when CUPTI is
 *      missing, refused, or held by another client (torch.profiler, Nsight);
 *   3. absent, with the reason (turned off, no driver; also chosen, without
 *      a launch, when the runtime finds no device: pi_gpu_timing_no_device).
 * A CUPTI client that comes later (its cuptiSubscribe or
 * cuptiActivityRegisterCallbacks, cupti_clients.c) gets CUPTI: the session
 * hands over and event pairs take over, said in a second GPU_TIMING record.
 *
 * PROFINJECT_GPU_TIMING=auto|cupti|events|off, PROFINJECT_GPU_SAMPLE=N
 * times every Nth launch with event pairs (CUPTI times all at no extra cost).
 */
#ifndef PI_GPU_TIMING_H
#define PI_GPU_TIMING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct pi_gpu_pair {
    uint64_t host_start; /* clock ticks before the real call */
    void *start_event;   /* event pairs: NULL when this launch is not timed */
    const void *stream;
    int per_thread_stream;
};

/* Set while no source times anything (decided absent, or turned off): the
 * hooks then test one flag inline instead of calling in, which is most of
 * what a launch costs beyond its record. */
extern _Atomic int pi_gpu_timing_idle;

void pi_gpu_timing_start_busy(struct pi_gpu_pair *pair, const void *stream,
                              int per_thread_stream, uint64_t host_start);
void pi_gpu_timing_finish_busy(struct pi_gpu_pair *pair, uint64_t correlation, int failed,
                               uint64_t host_end);

/**
 * pi_gpu_timing_start - a launch or copy on @stream is about to be made
 * @pair: filled for pi_gpu_timing_finish
 * @per_thread_stream: the caller used the per-thread default stream flavour
 * @host_start: clock ticks read before the real call
 */
static inline void pi_gpu_timing_start(struct pi_gpu_pair *pair, const void *stream,
                                       int per_thread_stream, uint64_t host_start)
{
    pair->host_start = host_start;
    pair->start_event = NULL;
    if (!atomic_load_explicit(&pi_gpu_timing_idle, memory_order_relaxed))
        pi_gpu_timing_start_busy(pair, stream, per_thread_stream, host_start);
}

/**
 * pi_gpu_timing_finish - the real call returned at @host_end (clock ticks,
 * the same reading as the call's record): its GPU time is to be that of
 * @correlation
 */
static inline void pi_gpu_timing_finish(struct pi_gpu_pair *pair, uint64_t correlation,
                                        int failed, uint64_t host_end)
{
    /* a pair started before the source went absent still ends */
    if (!atomic_load_explicit(&pi_gpu_timing_idle, memory_order_relaxed) || pair->start_event)
        pi_gpu_timing_finish_busy(pair, correlation, failed, host_end);
}

/* pi_gpu_timing_drain - write every GPU time that will come (exit, exec, a window closing) */
void pi_gpu_timing_drain(void);

/**
 * pi_gpu_timing_yield_cupti - another CUPTI client asks for CUPTI (@what it
 * called): hand the session over and go on with event pairs
 */
void pi_gpu_timing_yield_cupti(const char *what);

/**
 * pi_gpu_timing_no_device - the runtime says there is no usable device or
 * driver (@error from cudaGetDeviceCount, whose real function is
 * @runtime_function): unless already chosen, GPU time is absent, written
 * once with the runtime's path and where CUPTI is; CUPTI is not started
 */
void pi_gpu_timing_no_device(int error, const void *runtime_function);

/* pi_gpu_timing_after_fork - the child has no timing thread and no usable CUDA state */
void pi_gpu_timing_after_fork(void);

#endif
