/*
 * gemm.h - the matrix products of a process (cuBLAS and cuBLASLt calls,
 * PI_REC_GEMM): FLOPs = 2·m·n·k·batch each, the kernels each launched (the
 * launches of its thread inside its span) and their GPU time, so achieved
 * TFLOP/s, by shape and type; and per kernel name, so that the module table
 * can credit FLOPs with the kernels' GPU time (gpu_modules.c).
 *
 * A call's kernels are the successful, top-level launches its thread made
 * while the call ran. Records of one thread come in order, so they are read
 * before the call: each thread keeps its recent launches, and the call
 * claims those in its span. GPU times come by correlation id, before or
 * after their launch.
 */
#ifndef PI_GEMM_H
#define PI_GEMM_H

#include <stdint.h>

#include "analysis/model/model.h"

/* The type class of a product, as peaks are quoted: "bf16", "fp16", "tf32", "fp32", "fp64",
 * "fp8", "int8", "other". */
const char *pi_gemm_dtype(unsigned a_type, unsigned compute);

struct pi_gemm_shape {
    uint32_t m, n, k, batch;
    const char *dtype; /* pi_gemm_dtype */
    uint64_t calls, kernels;
    uint64_t flops;  /* 2·m·n·k·batch of each call */
    uint64_t gpu_ns; /* of its calls' kernels */
};

/* A kernel name's share of the products: what its launches did. */
struct pi_gemm_kernel {
    char *name;
    double flops; /* a call's FLOPs split evenly among its kernels */
    uint64_t kernels, gpu_ns;
};

/* When each call was made, for the totals per step. */
struct pi_gemm_moment {
    uint64_t ns;
    uint64_t flops;
};

struct pi_gemm {
    struct pi_gemm_shape *shapes; /* by FLOPs, most first, once the file is read */
    size_t shape_count, shape_capacity;
    struct pi_gemm_kernel *kernels;
    size_t kernel_count, kernel_capacity;
    struct pi_gemm_moment *moments; /* by time, once the file is read */
    size_t moment_count, moment_capacity;
    uint64_t calls, failed, untimed_kernels;
    double flops;
    uint64_t gpu_ns;
    void *state; /* while the file is read (gemm.c) */
};

/* pi_gemm_event - any record of @process: products, launches */
void pi_gemm_event(struct pi_process_info *process, const struct pi_reader *reader,
                   const struct pi_event *ev);

/* pi_gemm_gpu_time - a GPU time of @process; @launched: its launch's host time when that was
 * read already, else 0 */
void pi_gemm_gpu_time(struct pi_process_info *process, const struct pi_event *ev,
                      uint64_t launched);

/* pi_gemm_finish_file - what is pending is dropped; tables ordered */
void pi_gemm_finish_file(struct pi_process_info *process);

void pi_gemm_free(struct pi_process_info *process);

/* pi_gemm_release_moments - forget when each call was made (per-step figures are the training
 * process's only): memory that would grow with the number of ranks */
void pi_gemm_release_moments(struct pi_process_info *process);

/* pi_gemm_flops_between - FLOPs of @process's products made from @start_ns to before @end_ns */
double pi_gemm_flops_between(const struct pi_process_info *process, uint64_t start_ns,
                             uint64_t end_ns);

/* pi_gemm_kernel_figures - FLOPs and GPU time of kernel @name over all products of @analysis;
 * 0 when it ran for none */
int pi_gemm_kernel_figures(const struct pi_analysis *analysis, const char *name, double *flops,
                           uint64_t *gpu_ns);

#endif
