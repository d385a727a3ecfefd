/*
 * section_native_time.h - CPU time by native operator (analysis/sites/native_time.h)
 * in the text and JSON reports.
 */
#ifndef PI_SECTION_NATIVE_TIME_H
#define PI_SECTION_NATIVE_TIME_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_native_time_text - "NATIVE CPU": for the processes with the most sampled CPU,
 * the operators that took it, all their threads together */
void pi_report_native_time_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_native_time_json - add "native_time" to @root (schema in analyzer/REPORT.md) */
void pi_report_native_time_json(struct cJSON *root, const struct pi_analysis *analysis);

#endif
