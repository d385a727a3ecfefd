/*
 * worker_time.h - where the data-loader workers of a process spent their
 * time: the main threads of its child processes (a DataLoader worker's
 * main thread runs its loop), by time class, over their lives.
 */
#ifndef PI_WORKER_TIME_H
#define PI_WORKER_TIME_H

#include "analysis/model/model.h"

/* What a worker does with its time, as a data-loading cause. */
enum pi_worker_activity {
    PI_WORKER_READING,   /* reads and opens of regular files: storage */
    PI_WORKER_COMPUTING, /* on a CPU by its clock: decoding, transforms, collate, pickling */
    PI_WORKER_SLEEPING,  /* time.sleep and other sleeps */
    PI_WORKER_WAITING,   /* locks, conditions, semaphores: IPC and shared state */
    PI_WORKER_IDLE,      /* waiting on its queue's pipe for the next index: not the limit */
    PI_WORKER_OTHER,     /* blocked in calls no hook sees, or waiting for a CPU */
    PI_WORKER_ACTIVITY_COUNT
};

/* pi_worker_activity_name - "reading", "computing", ... */
const char *pi_worker_activity_name(enum pi_worker_activity activity);

struct pi_worker_time {
    size_t workers;    /* child processes in the trace */
    size_t concurrent; /* the most alive at once: num_workers, where each epoch starts its own */
    uint64_t wall_ns;  /* their main threads' working spans (else lives) together */
    uint64_t ns[PI_WORKER_ACTIVITY_COUNT];
};

/* pi_is_worker_of - whether @process is a worker of @parent: a child process */
int pi_is_worker_of(const struct pi_process_info *process, const struct pi_process_info *parent);

/* pi_worker_time_of - the workers of @parent in @analysis: 0 when it has none traced */
int pi_worker_time_of(const struct pi_analysis *analysis, const struct pi_process_info *parent,
                      struct pi_worker_time *out);

/* pi_worker_busy_ns - the workers' time spent on batches: all but waiting for an index */
uint64_t pi_worker_busy_ns(const struct pi_worker_time *time);

#endif
