/* section_verdict.h - the verdict in the reports (section_verdict.c). */
#ifndef PI_SECTION_VERDICT_H
#define PI_SECTION_VERDICT_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_verdict_text - "VERDICT": each finding, its evidence and what to try */
void pi_report_verdict_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_verdict_json - add "verdict" to @root (schema in analyzer/REPORT.md) */
void pi_report_verdict_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_verdict_html - the page's verdict: each finding and what to try */
void pi_report_verdict_html(FILE *out, const struct pi_analysis *analysis);

#endif
