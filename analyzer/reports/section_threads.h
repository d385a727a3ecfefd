/* section_threads.h - where each thread's time went, in the reports (section_threads.c). */
#ifndef PI_SECTION_THREADS_H
#define PI_SECTION_THREADS_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_threads_text - "TIME BY THREAD": each thread's share of wall time by class */
void pi_report_threads_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_threads_json - "threads" into @p's object @process (schema in analyzer/REPORT.md) */
void pi_report_threads_json(struct cJSON *process, const struct pi_process_info *p);

/* pi_report_threads_html - the page's bar per thread: where its time went */
void pi_report_threads_html(FILE *out, const struct pi_analysis *analysis);

/* pi_report_threads_over_time_html - a row per thread, what it mostly did in each bucket */
void pi_report_threads_over_time_html(FILE *out, const struct pi_analysis *analysis);

#endif
