/*
 * section_summary_mode.h - which parts of a process's figures come from
 * summaries (summary mode, format 6) and which from windows of full
 * detail: the windows, why each opened, the slow step that opened it.
 */
#ifndef PI_SECTION_SUMMARY_MODE_H
#define PI_SECTION_SUMMARY_MODE_H

#include <stdio.h>

#include "analysis/model/model.h"

struct cJSON;

/* pi_report_summary_mode_text - one "SUMMARY MODE" section: totals, then the windows by process */
void pi_report_summary_mode_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_summary_mode_json - "summary_mode" in each such process's object of @processes */
void pi_report_summary_mode_json(struct cJSON *process, const struct pi_process_info *p);

/* pi_report_summary_mode_html - one paragraph: what the processes recorded in summary mode hold */
void pi_report_summary_mode_html(FILE *out, const struct pi_analysis *analysis);

#endif
