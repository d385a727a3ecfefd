/*
 * section_python_time.h - time by Python function (analysis/python_time.h)
 * in the text, JSON and HTML reports.
 */
#ifndef PI_SECTION_PYTHON_TIME_H
#define PI_SECTION_PYTHON_TIME_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_python_time_text - "PYTHON TIME": each sampled process, its functions by self time
 * outside imports, and its imports' time on one line */
void pi_report_python_time_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_python_time_json - add "python_time" to @root (schema in analyzer/REPORT.md) */
void pi_report_python_time_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_python_time_html - the page's table of time by Python function */
void pi_report_python_time_html(FILE *out, const struct pi_analysis *analysis);

/* pi_report_python_time_flame - the page's flame graph of @p's main thread's time by Python
 * call path (@p: the training process, NULL when none) */
void pi_report_python_time_flame(FILE *out, const struct pi_analysis *analysis,
                                 const struct pi_process_info *p);

#endif
