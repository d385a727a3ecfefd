/* section_overview.h - the run as a whole, on top of the reports (section_overview.c). */
#ifndef PI_SECTION_OVERVIEW_H
#define PI_SECTION_OVERVIEW_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_overview_text - the first lines: the run's size, profiling cost, host pids, and a
 * warning for each kind of loss */
void pi_report_overview_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_overview_json - add "inputs" to @root (schema in analyzer/REPORT.md) */
void pi_report_overview_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_overview_html - the page's heading and the run's size */
void pi_report_overview_html(FILE *out, const struct pi_analysis *analysis);

#endif
