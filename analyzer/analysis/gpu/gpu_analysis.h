/*
 * gpu_analysis.h - what the CUDA records add up to: live device memory
 * per process (with the call sites of what was never freed and of what
 * was live at the peak), GPU time per kernel and copy (joined to launches
 * by correlation id), and how GPU time was measured.
 */
#ifndef PI_GPU_ANALYSIS_H
#define PI_GPU_ANALYSIS_H

#include <stdint.h>

#include "analysis/model/model.h"
#include "analysis/gpu/memory_order.h"

#define PI_TOP_SITES 5

#include "analysis/gpu/site_bytes.h"

#define PI_MAX_DEVICES 16
#define PI_MAX_POOLS 32

/* a stream-ordered memory pool, as the driver reported its reserve */
struct pi_pool_reserve {
    uint64_t pool, reserved, high;
    uint64_t read_at_ns; /* when @reserved was read */
};

/* a device allocation that failed (out of memory, most often) */
struct pi_device_failure {
    uint64_t ns, bytes;
    uint64_t held_bytes; /* the process's device memory when it failed */
    uint32_t tid;
    struct pi_site_bytes site; /* where it was asked for */
    int has_device_memory;     /* the device's own account follows (format 9) */
    uint64_t free_bytes, total_bytes;
    /* the next allocation of the thread after it: PyTorch's allocator frees its cache and asks
     * again */
    int in_order; /* taken in time order with the allocations: held_bytes is known */
    int retried, retry_failed;
    uint64_t freed_before_retry;
};

#define PI_MAX_DEVICE_FAILURES 4

struct pi_gpu_memory {
    uint64_t live, peak, peak_ns;
    /* device allocations that failed: the first ones, and how many in all */
    struct pi_device_failure failures[PI_MAX_DEVICE_FAILURES];
    unsigned failure_count;
    uint64_t failures_total;
    uint64_t device_live[PI_MAX_DEVICES], device_peak[PI_MAX_DEVICES];
    unsigned devices_seen; /* one past the highest device number seen */
    uint64_t pinned_live, pinned_peak;
    uint64_t allocations, frees, allocated_bytes;
    uint64_t live_at_window_start; /* already allocated when a capture window opened */
    /* stream-ordered pools: the reserve each holds; the peak is the sum of
     * their high-water marks, the end the sum of their last readings */
    struct pi_pool_reserve pools[PI_MAX_POOLS];
    unsigned pool_count;
    uint64_t pool_reserved_peak, pool_reserved_end;
    struct pi_series series; /* device bytes over time */
    struct pi_site_bytes at_peak[PI_TOP_SITES];
    int at_peak_count;
    struct pi_site_bytes *leaks; /* still live at the end, by call site, largest first */
    size_t leak_count;
    /* allocated from grown_since_ns (the steady steps' start, set before the end) and still
     * live at the end, by call site, largest first: what a leak kept */
    uint64_t grown_since_ns;
    struct pi_site_bytes *grown;
    size_t grown_count;
    /* device bytes after each change, in time order, not yet taken (a timeline wants them) */
    struct pi_memory_change { uint64_t ts_ns, live; } *changes;
    size_t change_count, change_capacity;
    int keep_changes;
    /* working state */
    struct pi_memory_order order; /* allocations and frees waiting to be taken in time order */
    void *live_map;   /* pointer -> allocation */
    void *site_map;   /* stack id -> live bytes */
    void *correlations; /* correlation id -> latency entry for GPU time */
    /* this file's GPU timing records, until they are played in file order (gpu_timing.h) */
    struct pi_gpu_timing_note *timing_notes;
    size_t timing_note_count, timing_note_capacity;
};

/* pi_gpu_time_event - account one GPU duration of @process; *@collective set when it is
 * an NCCL kernel's
 * Return: the host time of the launch or copy it belongs to, 0 when that was not read yet. */
uint64_t pi_gpu_time_event(struct pi_analysis *analysis, const struct pi_reader *reader,
                           struct pi_process_info *process, const struct pi_event *ev,
                           int *collective);

/* pi_cuda_level_name - "runtime", "driver" or "driver in runtime", from a CUDA record's flags */
const char *pi_cuda_level_name(uint16_t flags);

/* pi_copy_size_class - the size class a copy of @bytes is counted under */
const char *pi_copy_size_class(uint64_t bytes);

/* pi_gpu_event - account one other CUDA record of @process (record_dispatch.c calls this) */
void pi_gpu_event(struct pi_analysis *analysis, const struct pi_reader *reader,
                  struct pi_process_info *process, const struct pi_event *ev);

/* pi_gpu_finish_process - resolve the end-of-file state (leaks, sites) while strings are known */
void pi_gpu_finish_process(struct pi_analysis *analysis, const struct pi_reader *reader,
                           struct pi_process_info *process);

void pi_gpu_free_process(struct pi_process_info *process);

/* pi_gpu_call_site - a PI_REC_CALL_SITE for an allocation: the live allocation gets its full stack */
void pi_gpu_call_site(struct pi_process_info *process, const struct pi_reader *reader,
                      const struct pi_event *ev);

/**
 * pi_gpu_take_changes - the device-memory changes applied since the last call
 * (allocations and frees are applied in time order, some time after they are read)
 * @count: receives how many
 * Return: the changes, valid until the next call; NULL when none.
 */
const struct pi_memory_change *pi_gpu_take_changes(struct pi_gpu_memory *m, size_t *count);

#endif
