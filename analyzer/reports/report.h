/*
 * report.h - the report outputs, all made from one struct pi_analysis: a
 * driver per format (report_text.c, report_json.c, report_html.c), each
 * writing the sections (section_*.c) in its order, and the Chrome trace.
 */
#ifndef PI_REPORT_H
#define PI_REPORT_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

void pi_report_text(FILE *out, struct pi_analysis *analysis);

/* pi_report_json - write the JSON report (documented in analyzer/REPORT.md) to @path; 0 or -1 */
int pi_report_json(const char *path, struct pi_analysis *analysis);

/* pi_report_json_object - the same report as a cJSON tree (for compare); caller frees */
struct cJSON *pi_report_json_object(struct pi_analysis *analysis);

/* pi_report_html - the self-contained HTML page with SVG plots; 0 or -1 */
int pi_report_html(const char *path, struct pi_analysis *analysis);

/* The Chrome trace (Trace Event Format), streamed during the analysis' pass. */
struct pi_chrome_trace {
    FILE *out;
    int first; /* no event written yet */
    const struct pi_analysis *analysis;
};

/**
 * pi_chrome_trace_observer - make @observer write the Chrome trace to @out
 * Hand @observer to the analysis in its options; @trace holds the state and
 * must live as long as the pass.
 */
void pi_chrome_trace_observer(struct pi_chrome_trace *trace, FILE *out,
                              struct pi_analysis_observer *observer);

#endif
