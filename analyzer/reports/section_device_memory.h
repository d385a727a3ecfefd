/*
 * section_device_memory.h - the device memory of each process in the
 * reports (section_device_memory.c).
 */
#ifndef PI_SECTION_DEVICE_MEMORY_H
#define PI_SECTION_DEVICE_MEMORY_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_device_memory_text - under "GPU": each process's device memory and its call sites */
void pi_report_device_memory_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_device_memory_json - "gpu_memory" into @p's object @process, where it used CUDA */
void pi_report_device_memory_json(struct cJSON *process, const struct pi_analysis *analysis,
                                  const struct pi_process_info *p);

/* pi_report_device_memory_html - the page's plot of @p's device memory over time */
void pi_report_device_memory_html(FILE *out, const struct pi_analysis *analysis,
                                  const struct pi_process_info *p);

/* pi_report_device_memory_flame - the page's flame graph of the device memory @p still held */
void pi_report_device_memory_flame(FILE *out, const struct pi_process_info *p);

#endif
