/*
 * native_time.h - where each thread of a process spent its CPU in native
 * code, from the samples its own CPU clock triggered (PI_REC_NATIVE_SAMPLE):
 * each sample's CPU time goes to the operator its stack was in. Python's
 * samples stop at the line that called into PyTorch; these say which
 * operator computed, on the loop's thread and on the intra-op threads that
 * compute for it, which have no Python frames at all.
 *
 * The operator of a stack, innermost first: the innermost ATen operator
 * entry (at::_ops::addmm::call -> "aten::addmm", the name torch.profiler
 * gives it); else, in a pool thread, the outermost at::native function
 * (the kernel that split its work over the pool); else the innermost
 * function outside the C library and the thread runtimes (a pool's thread
 * spinning for work is named so). A stack inside an
 * import (or a library's initialisers) is PI_NATIVE_IMPORTS, whatever ran.
 */
#ifndef PI_NATIVE_TIME_H
#define PI_NATIVE_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/model/model.h"
#include "analysis/sites/call_sites.h"

/* The operator of samples taken while modules loaded: not the job's work. */
#define PI_NATIVE_IMPORTS "imports (modules and libraries loading)"
/* How the operator of a pool's thread between tasks ends ("OpenMP threads waiting for
 * work (spinning)"): CPU spent, no work done. */
#define PI_NATIVE_SPINNING " waiting for work (spinning)"

/* pi_native_operator_is_spinning - whether @name is a pool's threads spinning for work */
int pi_native_operator_is_spinning(const char *name);

/* CPU time of one thread in one operator. */
struct pi_native_operator {
    uint32_t tid;
    char *name;
    uint64_t ns, samples;
    uint64_t steady_ns; /* of it, inside the process's steady steps */
};

/* A sample's moment, kept until its file ends, when the steady steps are known. */
struct pi_native_moment {
    uint64_t ns, key, dur_ns; /* key: thread << 32 | stack */
};

/* Samples whose moments are kept per file, at most: 24 MiB (a 10 ms interval on 8 busy
 * threads fills it in 35 minutes); past it the steady figures are not given. */
#define PI_NATIVE_MOMENTS_MAX (1u << 20)

/* One process's samples, kept with the process (model.h). */
struct pi_native_time {
    struct pi_native_operator *operators; /* by (thread, operator), most time first */
    size_t count, capacity;
    uint64_t sampled_ns, samples;
    uint64_t unnamed_ns;   /* samples without a stack: the stack table was full */
    uint64_t profiler_ns;  /* samples taken while the thread ran the profiler's own code */
    uint64_t loader_ns;    /* samples not walked: the loader's list of modules was locked */
    uint64_t lost_ns;      /* samples the ring had no room for */
    void *pending;         /* this file's sample time by (thread, stack id), until its end */
    struct pi_native_moment *moments; /* this file's samples, until its end */
    size_t moment_count, moment_capacity;
    int moments_full;      /* some were not kept */
    /* the operators' steady_ns hold the steady steps' samples: the process has steady steps
     * and every sample's moment was kept */
    int steady_known;
};

/* pi_native_time_event - account a PI_REC_NATIVE_SAMPLE of @process (record_dispatch.c) */
void pi_native_time_event(struct pi_process_info *process, const struct pi_event *ev);

/* pi_native_time_finish_file - name @process's stacks while the file's definitions are known;
 * the samples from @steady_start_ns to @steady_end_ns are the steady steps' (0s: none) */
void pi_native_time_finish_file(struct pi_process_info *process, const struct pi_reader *reader,
                                uint64_t steady_start_ns, uint64_t steady_end_ns);

/* pi_native_operator_of - the operator @site's sample is credited to, into @out */
void pi_native_operator_of(const struct pi_call_site *site, char *out, size_t size);

/**
 * pi_native_time_by_operator - @t's operators summed over the threads, of the rows (a thread
 * and an operator) @keep keeps (all when NULL), most time first
 * @sums: receives a new array (free it) whose rows' tid holds how many threads ran it; its
 *        names are @t's
 * @total_ns: receives the kept rows' time in all
 * @steady: the time inside the steady steps (steady_known), not the whole run's
 * Return: the rows, 0 when none (or without memory).
 */
size_t pi_native_time_by_operator(const struct pi_native_time *t,
                                  int (*keep)(const struct pi_native_operator *row,
                                              const void *context),
                                  const void *context, int steady,
                                  struct pi_native_operator **sums, uint64_t *total_ns);

/* pi_native_time_free - release @process's samples */
void pi_native_time_free(struct pi_process_info *process);

#endif
