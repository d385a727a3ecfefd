/*
 * section_processes.h - each process of the job, its memory and CPU time,
 * in the reports (section_processes.c).
 */
#ifndef PI_SECTION_PROCESSES_H
#define PI_SECTION_PROCESSES_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_processes_text - "MEMORY AND CPU BY PROCESS": the tree's host memory, then a row
 * per process */
void pi_report_processes_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_process_json - a new object for @p: pid, command, file, times, records, how it
 * ended (schema in analyzer/REPORT.md) */
struct cJSON *pi_report_process_json(const struct pi_analysis *analysis,
                                     const struct pi_process_info *p);

/* pi_report_process_usage_json - "memory" and "cpu" into @p's object @process */
void pi_report_process_usage_json(struct cJSON *process, const struct pi_analysis *analysis,
                                  const struct pi_process_info *p);

/* pi_report_processes_memory_html - the page's RSS over time, a line per process */
void pi_report_processes_memory_html(FILE *out, const struct pi_analysis *analysis);

/* pi_report_processes_html - the page's table of processes */
void pi_report_processes_html(FILE *out, const struct pi_analysis *analysis);

#endif
