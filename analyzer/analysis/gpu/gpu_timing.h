/*
 * gpu_timing.h - how the job's GPU time was measured (CUPTI, event pairs,
 * none), from the processes' PI_REC_GPU_TIMING records. The whole job gets
 * one answer, chosen record by record in file order (a better source wins;
 * an empty reason is taken over), so a file's records are noted while it
 * is read and played into the analysis when the file takes its place in
 * the file order: the same choice whichever thread read which file.
 */
#ifndef PI_GPU_TIMING_H
#define PI_GPU_TIMING_H

#include "analysis/model/model.h"

struct pi_gpu_memory;

/* One PI_REC_GPU_TIMING record of a file, kept until the file is settled. */
struct pi_gpu_timing_note {
    int source;   /* enum pi_gpu_timing_source */
    char *reason; /* "" when none was given */
};

/* pi_gpu_timing_keep - note a timing record of the file being read (a repeat of the last
 * note changes nothing and is not kept) */
void pi_gpu_timing_keep(struct pi_gpu_memory *memory, int source, const char *reason);

/* pi_gpu_timing_settle - play @process's notes into @analysis's choice, in order, and
 * let them go */
void pi_gpu_timing_settle(struct pi_analysis *analysis, struct pi_process_info *process);

/* pi_gpu_timing_free - the notes of a process never settled (a pass cut short) */
void pi_gpu_timing_free(struct pi_gpu_memory *memory);

#endif
