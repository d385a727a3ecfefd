/*
 * gemm_summary.h - the matrix products of a whole trace for the reports:
 * every process's calls, FLOPs and kernel GPU time by shape and type, the
 * device's peak for the type that did the most FLOPs, and per steady step
 * of the training process its FLOPs and so the model FLOPs utilisation
 * (GEMMs only: attention kernels and the rest count GPU time, no FLOPs).
 */
#ifndef PI_GEMM_SUMMARY_H
#define PI_GEMM_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gpu/gemm.h"
#include "analysis/gpu/gemm_peak.h"
#include "analysis/model/model.h"

struct pi_gemm_summary {
    uint64_t calls, failed, kernels, untimed_kernels;
    double flops;
    uint64_t gpu_ns;
    struct pi_gemm_shape *shapes; /* merged over processes, by FLOPs, most first */
    size_t shape_count;
    const char *dtype;     /* the type class of the most FLOPs */
    double dtype_flops;    /* its FLOPs */
    uint64_t dtype_gpu_ns; /* its kernels' GPU time */
    const struct pi_device_info *device; /* the training process's first device; NULL: none */
    int has_peak;
    struct pi_gemm_peak peak; /* for dtype on device, where has_peak */
    uint64_t steady_steps;    /* of the training process; 0: no steps, no per-step figures */
    double flops_per_step;    /* its products' FLOPs per steady step */
    uint64_t steady_ns;       /* the steady steps' time together */
    double mfu;               /* flops per step / step time / peak; < 0: not known */
};

/**
 * pi_gemm_summarise - @summary of @analysis's products
 * Return: 1 when the trace has cuBLAS products, 0 when none (nothing to free), -1 without
 * memory.
 */
int pi_gemm_summarise(const struct pi_analysis *analysis, struct pi_gemm_summary *summary);

void pi_gemm_summary_free(struct pi_gemm_summary *summary);

/* pi_tflops_per_s - @flops over @gpu_ns in TFLOP/s, 0 without time */
static inline double pi_tflops_per_s(double flops, uint64_t gpu_ns)
{
    return gpu_ns ? flops / (double)gpu_ns / 1e3 : 0;
}

#endif
