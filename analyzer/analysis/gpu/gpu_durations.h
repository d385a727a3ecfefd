/*
 * gpu_durations.h - GPU durations to their launches and copies (gpu_durations.c).
 */
#ifndef PI_GPU_DURATIONS_H
#define PI_GPU_DURATIONS_H

#include <stdint.h>

#include "analysis/gpu/gpu_analysis.h"

/* pi_gpu_durations_expect - a launch or copy at @launch_ns whose GPU time
 * (correlation @corr) goes to @gpu_entry, whenever it comes */
void pi_gpu_durations_expect(struct pi_analysis *analysis, struct pi_process_info *process,
                             uint64_t corr, struct pi_latency_entry *gpu_entry, uint64_t launch_ns);

/* pi_gpu_durations_time - one GPU time record, to its launch's entry; *@collective
 * set when it is an NCCL kernel's (known by the launch's name or the GPU's)
 * Return: the host time of that launch, 0 when it was not read yet. */
uint64_t pi_gpu_durations_time(struct pi_analysis *analysis, struct pi_process_info *process,
                               const struct pi_reader *reader, const struct pi_event *ev,
                               int *collective);

#endif
