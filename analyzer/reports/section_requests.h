/*
 * section_requests.h - the requests a serving process answered, in the
 * reports (section_requests.c).
 */
#ifndef PI_SECTION_REQUESTS_H
#define PI_SECTION_REQUESTS_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_requests_text - "REQUESTS": each serving process's requests, the training
 * process (the report's subject) first */
void pi_report_requests_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_requests_json - "requests" into @p's object @process when it served requests
 * (schema in analyzer/REPORT.md) */
void pi_report_requests_json(struct cJSON *process, const struct pi_analysis *analysis,
                             const struct pi_process_info *p);

/* pi_report_requests_html - the subject's requests as a table, when it served requests */
void pi_report_requests_html(FILE *out, const struct pi_analysis *analysis);

/* pi_request_kind_words - "one per NAME": what each request is a call of, into @out */
const char *pi_request_kind_words(const struct pi_process_info *p, char *out, size_t size);

#endif
