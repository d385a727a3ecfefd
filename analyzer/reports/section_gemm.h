/*
 * section_gemm.h - cuBLAS and cuBLASLt matrix products in the reports:
 * FLOPs, achieved TFLOP/s over their kernels' GPU time, the device's peak,
 * the model FLOPs utilisation per steady step, and the table by shape
 * (gemm_summary.h); by module path with the GPU-time-by-module table.
 */
#ifndef PI_SECTION_GEMM_H
#define PI_SECTION_GEMM_H

#include <stdio.h>

#include "analysis/model/model.h"

struct cJSON;

/* pi_report_gemm_text - "GEMMS": totals, peak and MFU, shapes, modules */
void pi_report_gemm_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_gemm_json - "gemm" into @root, null without products (schema in analyzer/REPORT.md) */
void pi_report_gemm_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_gemm_html - the page's FLOPs and TFLOP/s table */
void pi_report_gemm_html(FILE *out, const struct pi_analysis *analysis);

#endif
