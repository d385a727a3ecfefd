/*
 * ranks.h - the ranks of a distributed job side by side: each rank's steps
 * summed up as its file is read, step by step across ranks, then the
 * straggler (the rank the others wait for), the skew between ranks and how
 * well their clocks were aligned.
 *
 * A rank is a process whose launcher gave it a rank (RANK, SLURM_PROCID,
 * ...; rank_identity.h) and that ran training steps. In a synchronous job
 * (DDP, FSDP) every step ends in collectives that wait for the last rank to
 * arrive: a rank's "own" time in a step is the step less its collective
 * waits: the main thread's lock waits (a gloo collective is a condition
 * wait of the main thread) and the GPU time of the NCCL kernels it
 * launched (a GPU job's collectives wait on the GPU, the host meanwhile in
 * a synchronisation, which then counts as no wait for its own GPU). The
 * straggler is the rank whose own time is the longest in 3/4 of the steps; its
 * delay in such a step is how much longer than the others' mean it took,
 * which is what the others spend waiting for it.
 *
 * Memory: a fixed-size summary per rank (two histograms) and one entry per
 * step index across all ranks; nothing grows with the events of a file.
 */
#ifndef PI_RANKS_H
#define PI_RANKS_H

#include "analysis/common/histogram.h"
#include "analysis/model/model.h"

struct pi_rank_summary {
    long rank, local_rank;
    int pid;                /* as the process saw itself */
    char host[64], boot[40];
    uint64_t steps, warmup; /* steps counted, and of them warm-up */
    struct pi_histogram step_ns, lock_ns; /* steady steps: length, main thread's lock waits */
    /* steady steps, summed: length, lock waits, waits for data, for the GPU, GPU work */
    uint64_t total_ns, lock_total_ns, data_ns, sync_ns, gpu_ns;
    uint64_t slowest; /* steady steps in which its own time was the longest of all ranks */
};

/* Why the straggler is slow: the part of its step that most exceeds the others'. */
enum pi_straggler_cause {
    PI_STRAGGLER_CPU,   /* computing on the CPU, or anything not recorded as a wait (a sleep) */
    PI_STRAGGLER_INPUT, /* waiting for its data loader */
    PI_STRAGGLER_GPU,   /* waiting for its GPU */
};

struct pi_rank_step; /* one step index across ranks (ranks.c) */

struct pi_ranks {
    char job[160];         /* what groups the files (pi_identity_job), "" when nothing did */
    long world;            /* the number of ranks the launcher said, -1: not said */
    size_t other_files;    /* rank files of other jobs, or repeats of a rank, left out */
    struct pi_rank_summary *ranks; /* in the order read */
    size_t count, capacity;
    uint64_t reference_boot_offset_ns; /* (ranks.c) */
    char reference_boot[64];
    int hosts;             /* distinct boots among the ranks */
    struct pi_rank_step *steps;
    size_t step_count, step_capacity;
    /* pi_ranks_finish */
    long straggler;               /* its rank, -1: none */
    size_t straggler_index;       /* in ranks[] */
    uint64_t steady_steps;        /* step indexes all ranks ran as steady steps */
    struct pi_histogram delay_ns; /* the straggler's delay in the steps it was slowest in */
    double others_wait_ns;        /* median of the other ranks' median lock wait per step */
    enum pi_straggler_cause cause;
    double cause_ns;              /* by how much per step that part exceeds the others' mean */
    struct pi_histogram end_skew_ns;     /* per step: last rank's end minus first's */
    struct pi_histogram release_skew_ns; /* per step: spread of the ends of the longest lock
                                          * waits (all released by one collective) */
    int64_t clock_drift_ns;    /* the most any rank's wall clock moved against its monotonic */
    uint64_t clock_read_ns;    /* the widest gap between a sync's two clock readings */
};

/* pi_ranks_clock_sync - a clock sync record of @process (monotonic and wall clock) */
void pi_ranks_clock_sync(struct pi_process_info *process, const struct pi_event *ev);

/* pi_ranks_add - @process has been read: when it is a rank that ran steps, add it
 * Return: 1 when its summary was taken (its per-step figures are not needed here again) */
int pi_ranks_add(struct pi_analysis *analysis, const struct pi_process_info *process);

/* pi_ranks_finish - once every file is read: the straggler, skews, alignment */
void pi_ranks_finish(struct pi_analysis *analysis);

void pi_ranks_free(struct pi_analysis *analysis);

/* pi_straggler_cause_name - "CPU", "input", "GPU" */
const char *pi_straggler_cause_name(enum pi_straggler_cause cause);

#endif
