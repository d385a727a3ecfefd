/*
 * section_gpu_modules.h - GPU time by nn.Module path (analysis/gpu/gpu_modules.h) in the
 * text, JSON and HTML reports.
 */
#ifndef PI_SECTION_GPU_MODULES_H
#define PI_SECTION_GPU_MODULES_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_gpu_modules_text - "GPU TIME BY MODULE": the module paths with their share of
 * the GPU time, its sampling error and launches; what no module holds */
void pi_report_gpu_modules_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_gpu_modules_json - add "gpu_modules" to @root (schema in analyzer/REPORT.md) */
void pi_report_gpu_modules_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_gpu_modules_html - the same table */
void pi_report_gpu_modules_html(FILE *out, const struct pi_analysis *analysis);

/* pi_report_gpu_modules_flame - the GPU time as a flame graph ("flame-gpu"): by Python call
 * path of the sampled launches, the backward pass by autograd node, kernels as leaves; after
 * the page's flame script; nothing without sampled launches */
void pi_report_gpu_modules_flame(FILE *out, const struct pi_analysis *analysis);

#endif
