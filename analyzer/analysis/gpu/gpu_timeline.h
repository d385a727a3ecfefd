/*
 * gpu_timeline.h - when a process's GPU was busy: GPU durations summed
 * into time buckets (the width doubles as the run gets longer, so memory
 * stays fixed), and the host-side span of its kernel launches (the
 * training loop of a GPU job when no steps were found).
 */
#ifndef PI_GPU_TIMELINE_H
#define PI_GPU_TIMELINE_H

#include <stdint.h>

#define PI_GPU_BUCKETS 256

struct pi_gpu_timeline {
    uint64_t origin_ns;          /* start of bucket 0 */
    uint64_t bucket_ns;          /* width of one bucket */
    uint64_t busy[PI_GPU_BUCKETS]; /* GPU time inside each bucket (concurrent work adds up) */
    uint64_t durations;          /* GPU durations seen */
    uint64_t first_gpu_ns, last_gpu_ns; /* first start, last end of GPU work */
    uint64_t launches;           /* kernel launches (host side) */
    uint64_t first_launch_ns, last_launch_ns; /* first start, last end of a launch call */
};

struct pi_process_info;

/* pi_gpu_timeline_work - GPU work of @dur_ns that started at @ts_ns */
void pi_gpu_timeline_work(struct pi_process_info *process, uint64_t ts_ns, uint64_t dur_ns);

/* pi_gpu_timeline_launch - a kernel launch call from @ts_ns lasting @dur_ns */
void pi_gpu_timeline_launch(struct pi_process_info *process, uint64_t ts_ns, uint64_t dur_ns);

/* pi_gpu_timeline_launches - @count launches (a summary) from @first_ns to @end_ns */
void pi_gpu_timeline_launches(struct pi_process_info *process, uint64_t first_ns, uint64_t end_ns,
                              uint64_t count);

/* pi_gpu_timeline_share - GPU busy share (0..1, capped) of bucket @i; 0 past the end */
double pi_gpu_timeline_share(const struct pi_gpu_timeline *timeline, unsigned i);

/* pi_gpu_timeline_buckets - how many buckets are in use (up to the last GPU work) */
unsigned pi_gpu_timeline_buckets(const struct pi_gpu_timeline *timeline);

#endif
