/*
 * section_spans.h - the calls of marked Python functions in the reports
 * (section_spans.c).
 */
#ifndef PI_SECTION_SPANS_H
#define PI_SECTION_SPANS_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_spans_text - "SPANS": each process's marked functions by total time, the training
 * process first */
void pi_report_spans_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_spans_json - "spans" into @p's object @process (schema in analyzer/REPORT.md) */
void pi_report_spans_json(struct cJSON *process, const struct pi_process_info *p);

/* pi_report_spans_html - the training process's marked functions as a table */
void pi_report_spans_html(FILE *out, const struct pi_analysis *analysis);

#endif
