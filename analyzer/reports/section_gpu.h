/*
 * section_gpu.h - the GPU in the reports: timing source, GPU busy, kernels
 * and copies (section_gpu.c).
 */
#ifndef PI_SECTION_GPU_H
#define PI_SECTION_GPU_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_gpu_text - "GPU": how GPU time was measured, kernels, copies */
void pi_report_gpu_text(FILE *out, struct pi_analysis *analysis);

/* pi_report_gpu_json - add "gpu" (timing, busy time) to @root (schema in analyzer/REPORT.md) */
void pi_report_gpu_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_gpu_process_json - a process's GPU busy time into its object @process */
void pi_report_gpu_process_json(struct cJSON *process, const struct pi_process_info *p);

/* pi_report_gpu_busy_html - the page's plot of @p's GPU busy share over time */
void pi_report_gpu_busy_html(FILE *out, const struct pi_analysis *analysis,
                             const struct pi_process_info *p);

/* pi_report_gpu_kernels_html - the page's tables of the top kernels by GPU time and of copies */
void pi_report_gpu_kernels_html(FILE *out, const struct pi_analysis *analysis);

#endif
