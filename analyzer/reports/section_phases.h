/*
 * section_phases.h - the phases of the processes' lives (analysis/sites/phases.h) in the
 * text, JSON and HTML reports.
 */
#ifndef PI_SECTION_PHASES_H
#define PI_SECTION_PHASES_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_phases_text - "PHASES": for the processes with the most sampled Python time and
 * more than one phase, the time of each phase, and the compilations */
void pi_report_phases_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_phases_json - add "phases" to @root (schema in analyzer/REPORT.md) */
void pi_report_phases_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_phases_html - a band per phase on each such process's time line */
void pi_report_phases_html(FILE *out, const struct pi_analysis *analysis);

#endif
