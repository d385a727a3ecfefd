/*
 * gpu_timing.h - GPU-side durations of launches and copies.
 *
 * With CUPTI's activity API, our correlation id is pushed as CUPTI's
 * external correlation around each launch and copy, and CUPTI's kernel,
 * copy and set records come back with real GPU start and end times.
 * Where CUPTI is unavailable (no driver, or refused in a container), a
 * pair of events is recorded on the launch's stream around it; a resolver
 * thread later asks the driver how far apart they completed. Either way a
 * GPU_TIME record is written off the application's path. Which source is
 * in use, and why a better one is not, is written once as GPU_TIMING.
 */
#ifndef PI_GPU_TIMING_H
#define PI_GPU_TIMING_H

#include <stdint.h>

struct pi_gpu_pair {
    void *start_event; /* NULL: this launch is not timed with events */
    const void *stream;
    int per_thread_stream;
    int correlation_pushed; /* CUPTI: our id is on CUPTI's external correlation stack */
};

/**
 * pi_gpu_timing_start - record the start event of a launch on @stream
 * @pair: receives the event; start_event stays NULL when this launch is not timed
 * @per_thread_stream: the caller used the per-thread default stream flavour
 */
void pi_gpu_timing_start(struct pi_gpu_pair *pair, const void *stream, int per_thread_stream,
                         uint64_t correlation);

/* pi_gpu_timing_finish - record the end event and queue the pair for @correlation */
void pi_gpu_timing_finish(struct pi_gpu_pair *pair, uint64_t correlation, int failed);

/* pi_gpu_timing_drain - write the GPU times that are ready now (before the trace closes) */
void pi_gpu_timing_drain(void);

/* pi_gpu_timing_after_fork - the child has no resolver and no usable CUDA state */
void pi_gpu_timing_after_fork(void);

#endif
