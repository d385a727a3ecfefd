/* section_latency.h - the latency of calls and of files in the reports (section_latency.c). */
#ifndef PI_SECTION_LATENCY_H
#define PI_SECTION_LATENCY_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_latency_text - "LATENCY" of the calls and "BUSIEST FILES" */
void pi_report_latency_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_latency_json - add "latency" and "files" to @root (schema in analyzer/REPORT.md) */
void pi_report_latency_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_latency_histograms_html - the page's histograms of the busiest calls */
void pi_report_latency_histograms_html(FILE *out, const struct pi_analysis *analysis);

/* pi_report_latency_html - the page's tables of the calls' latency and of the busiest files */
void pi_report_latency_html(FILE *out, const struct pi_analysis *analysis);

#endif
