/*
 * section_collectives.h - NCCL per process in the reports: collectives by
 * function, datatype and size, communicators, NCCL kernels outside any
 * recorded call (analysis/gpu/collectives.h).
 */
#ifndef PI_SECTION_COLLECTIVES_H
#define PI_SECTION_COLLECTIVES_H

#include <stdio.h>

#include "analysis/model/model.h"

struct cJSON;
struct pi_json_stream;

/* pi_report_collectives_text - "COLLECTIVES (pid N)" for each process that used NCCL */
void pi_report_collectives_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_collectives_json - add "collectives" to @root (schema in analyzer/REPORT.md) */
void pi_report_collectives_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_collectives_json_stream - the same "collectives" into the object open in @stream,
 * a process's at a time (a job's ranks each have theirs) */
void pi_report_collectives_json_stream(struct pi_json_stream *stream,
                                       const struct pi_analysis *analysis);

/* pi_report_collectives_html - the page's collective table of each process that used NCCL */
void pi_report_collectives_html(FILE *out, const struct pi_analysis *analysis);

#endif
