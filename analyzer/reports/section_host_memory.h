/*
 * section_host_memory.h - the host memory of the whole process tree
 * (analysis/host/host_memory.h) in the text, JSON and HTML reports: its
 * peak as PSS where the processes read theirs (format 8), each shared page
 * counted once, else as the RSS added up, and each report says which.
 */
#ifndef PI_SECTION_HOST_MEMORY_H
#define PI_SECTION_HOST_MEMORY_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* The tree's figure: PSS where there is one, else RSS. */
struct pi_host_peak {
    const char *figure; /* "PSS" or "RSS" */
    uint64_t bytes;     /* 0: no samples */
    uint64_t at_ns;     /* CLOCK_MONOTONIC */
    uint32_t alive;     /* processes alive then */
};

/* pi_host_peak_of - the tree's peak as the reports give it */
struct pi_host_peak pi_host_peak_of(const struct pi_analysis *analysis);

/* pi_report_host_memory_text - the tree's line above MEMORY AND CPU BY PROCESS's table */
void pi_report_host_memory_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_host_memory_json - add "host_memory" to @root (schema in analyzer/REPORT.md) */
void pi_report_host_memory_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_process_pss_json - a process's PSS into its "memory" object, where it read it */
void pi_report_process_pss_json(struct cJSON *memory, const struct pi_analysis *analysis,
                                const struct pi_process_info *process);

#endif
