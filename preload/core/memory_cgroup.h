/*
 * memory_cgroup.h - the OOM kills of the process's memory cgroup. A
 * process the kernel's OOM killer takes gets SIGKILL and writes nothing
 * more; the kill shows only in its cgroup's count (cgroup v2
 * memory.events, v1 memory.oom_control), which the other processes of the
 * job, sharing the cgroup, can read. Each writer reads it with its samples
 * (a pread of a small file, a few microseconds) and records it when it
 * changes: the analysis then tells a process the OOM killer took from one
 * killed otherwise.
 *
 * Raw system calls only: the writer never calls a hooked function.
 */
#ifndef PI_MEMORY_CGROUP_H
#define PI_MEMORY_CGROUP_H

#include <stdint.h>

struct pi_memory_cgroup {
    int looked;         /* the cgroup was looked for (at the first reading) */
    int events_fd;      /* memory.events or memory.oom_control; -1: none */
    char dir[256];      /* the cgroup's folder, for its limit and usage */
    int v2;             /* the unified hierarchy's file names */
    int64_t last_kills; /* the count last recorded; -1: none yet */
};

struct pi_memory_cgroup_reading {
    uint64_t oom_kills;   /* OOM kills in the cgroup since it was made */
    uint64_t limit_bytes; /* its memory limit; 0: none */
    uint64_t usage_bytes; /* its memory in use at the reading */
};

/* pi_memory_cgroup_open - start afresh in this process image: its memory cgroup (from
 * /proc/self/cgroup) is looked for at the first reading */
void pi_memory_cgroup_open(struct pi_memory_cgroup *cgroup);

/* pi_memory_cgroup_close - close what is open (an fd inherited through fork too) */
void pi_memory_cgroup_close(struct pi_memory_cgroup *cgroup);

/**
 * pi_memory_cgroup_read - 1 with @reading filled when the cgroup's OOM kill
 * count differs from the one last recorded (the first reading too), else 0
 */
int pi_memory_cgroup_read(struct pi_memory_cgroup *cgroup, struct pi_memory_cgroup_reading *reading);

#endif
