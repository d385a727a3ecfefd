/*
 * collectives.h - NCCL per process: a table of collectives by function,
 * datatype and size (calls, bytes, host time, GPU time, algorithm and bus
 * bandwidth), the communicators, and NCCL kernels that ran outside any
 * recorded call (a PyTorch linking NCCL statically), by kernel name.
 *
 * GPU time: the kernels named as NCCL's (ncclDevKernel_*, ncclKernel_*)
 * launched on the thread inside a call's span. Inside a group NCCL only
 * queues the work; the group's end launches it, and its kernels' time is
 * split evenly between the group's calls.
 */
#ifndef PI_COLLECTIVES_H
#define PI_COLLECTIVES_H

#include <stdint.h>

#include "analysis/model/model.h"

struct pi_collective_row {
    unsigned func;     /* enum pi_nccl_func */
    unsigned datatype; /* ncclDataType_t */
    uint64_t bucket;   /* bytes of each call in [bucket, 2 bucket); 0: none */
    uint64_t calls, failed, kernels;
    uint64_t bytes;     /* count x datatype size; all-gather and reduce-scatter x ranks */
    double bus_bytes;   /* bytes x the bus factor of nccl-tests for each call's ranks */
    uint64_t host_ns, gpu_ns;
};

struct pi_nccl_communicator {
    uint64_t handle, hash; /* hash: of the unique id, the same on every rank; 0 unknown */
    int rank, nranks;      /* -1: unknown */
    unsigned op;           /* enum pi_nccl_comm_op that made it */
    int failed;
    uint64_t at_ns, init_ns; /* when it was asked for; host time of the call */
    unsigned end_op;         /* finalize, destroy or abort; 0: none recorded */
    uint64_t calls;          /* collectives and point-to-point calls on it: the last one's
                              * sequence number, as NCCL's own count */
    unsigned last_func;      /* enum pi_nccl_func of the last call; 0: none */
};

struct pi_nccl_kernel {
    char *name;
    uint64_t kernels, gpu_ns;
};

struct pi_collectives {
    struct pi_collective_row *rows; /* by function, datatype, bucket */
    size_t row_count, row_capacity;
    struct pi_nccl_communicator *comms; /* in the order they were made */
    size_t comm_count, comm_capacity;
    struct pi_nccl_kernel *outside; /* NCCL kernels launched outside any recorded call */
    size_t outside_count, outside_capacity;
    uint64_t calls, failed, bytes, host_ns, gpu_ns, outside_gpu_ns;
    void *state; /* while the file is read (collectives.c) */
};

/* pi_collectives_event - any record of @process: the collectives' own, launches, GPU times */
void pi_collectives_event(struct pi_process_info *process, const struct pi_reader *reader,
                          const struct pi_event *ev);

/* pi_collectives_gpu_time - a GPU time of @process; @launched: the host time of its launch
 * when that was read already (pi_gpu_time_event), else 0 */
void pi_collectives_gpu_time(struct pi_process_info *process, const struct pi_event *ev,
                             uint64_t launched);

/* pi_collectives_finish_file - resolve what is pending and order the table */
void pi_collectives_finish_file(struct pi_process_info *process, const struct pi_reader *reader);

void pi_collectives_free(struct pi_process_info *process);

/* pi_collective_bus_factor - nccl-tests' bus bandwidth over algorithm bandwidth for @func
 * on @nranks ranks (1 when @nranks is not known) */
double pi_collective_bus_factor(unsigned func, int nranks);

/* Names for the reports and dump: "all_reduce", "init_rank", "float32", "sum". */
const char *pi_nccl_func_name(unsigned func);
const char *pi_nccl_comm_op_name(unsigned op);
const char *pi_nccl_datatype_name(unsigned datatype);
const char *pi_nccl_redop_name(unsigned redop);
/* pi_is_nccl_kernel - whether @name (mangled or demangled) is one of NCCL's kernels */
int pi_is_nccl_kernel(const char *name);

/* pi_nccl_datatype_size - bytes of an element, 0 when unknown */
unsigned pi_nccl_datatype_size(unsigned datatype);

#endif
