/*
 * device_failures.h - device allocations that failed: the request, where
 * it came from, what the process held and what the device had then
 * (format 9), and whether the caller freed memory and asked again, as
 * PyTorch's caching allocator does before it raises OutOfMemoryError.
 */
#ifndef PI_DEVICE_FAILURES_H
#define PI_DEVICE_FAILURES_H

#include "analysis/gpu/gpu_analysis.h"

/* pi_device_failure_event - a failed device allocation of @m's process (nested driver
 * records left out), as it is read: kept, with where it was asked for */
void pi_device_failure_event(struct pi_gpu_memory *m, const struct pi_reader *reader,
                             const struct pi_event *ev);

/* pi_device_failure_in_order - a device allocation record, failed or not, as the allocations
 * are taken in time order (before it counts): a failure learns what the process held, the
 * thread's next request after it is its retry */
void pi_device_failure_in_order(struct pi_gpu_memory *m, const struct pi_event *ev);

/* pi_device_failure_memory - the device's free and total bytes after a failure (PI_REC_DEVICE_MEMORY) */
void pi_device_failure_memory(struct pi_gpu_memory *m, const struct pi_event *ev);

/* pi_device_failure_site - Python frames read after a failed request (its PI_REC_CALL_SITE) */
void pi_device_failure_site(struct pi_gpu_memory *m, const struct pi_reader *reader,
                            const struct pi_event *ev);

/* pi_device_failures_free - let go of what the failures hold */
void pi_device_failures_free(struct pi_gpu_memory *m);

#endif
