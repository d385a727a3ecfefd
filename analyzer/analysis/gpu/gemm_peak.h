/*
 * gemm_peak.h - a device's peak dense matrix throughput per type class, so
 * that achieved GEMM TFLOP/s can be set against it (model FLOPs
 * utilisation). From NVIDIA's datasheets for a known (architecture, SM
 * count); else the architecture's FLOPs per clock per SM × SMs × the clock
 * the device reports; else unknown, never a guess.
 */
#ifndef PI_GEMM_PEAK_H
#define PI_GEMM_PEAK_H

#include "analysis/model/model.h"

#define PI_PEAK_DATASHEET "datasheet"
#define PI_PEAK_COMPUTED "computed from the reported clock"

struct pi_gemm_peak {
    double tflops_per_s;
    const char *source;  /* PI_PEAK_DATASHEET or PI_PEAK_COMPUTED */
    const char *product; /* the datasheet's product ("H100 SXM5 / H200"); NULL when computed */
};

/**
 * pi_gemm_peak - @device's peak for @dtype (pi_gemm_dtype's class)
 * Return: 0 with @peak filled, -1 when not known.
 */
int pi_gemm_peak(const struct pi_device_info *device, const char *dtype,
                 struct pi_gemm_peak *peak);

#endif
