/*
 * section_steps.h - the training process's steps in the reports
 * (section_steps.c).
 */
#ifndef PI_SECTION_STEPS_H
#define PI_SECTION_STEPS_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_steps_text - "STEPS": the training process's steps, their split, warm-up, growth */
void pi_report_steps_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_steps_json - "steps" into @p's object @process (schema in analyzer/REPORT.md) */
void pi_report_steps_json(struct cJSON *process, struct pi_process_info *p);

/* pi_report_steps_html - each step of the training process as a stacked bar */
void pi_report_steps_html(FILE *out, const struct pi_analysis *analysis);

/* pi_report_step_time_html - @p's step time over the run, a point per step */
void pi_report_step_time_html(FILE *out, const struct pi_analysis *analysis,
                              const struct pi_process_info *p);

#endif
