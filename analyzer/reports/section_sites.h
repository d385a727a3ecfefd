/*
 * section_sites.h - the Python lines of the report: which lines launch each
 * kernel (from the sampled launches), where the training loop waits, and
 * how each process's Python frames were read; in text, JSON and HTML.
 */
#ifndef PI_SECTION_SITES_H
#define PI_SECTION_SITES_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_sites_text - the text report's section on waits by line and on Python frames */
void pi_report_sites_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_kernel_lines - under a kernel's row: the lines that launch it most */
void pi_report_kernel_lines(FILE *out, const struct pi_analysis *analysis, const char *kernel,
                            const char *indent);

/* pi_report_sites_json - add "launch_sites", "wait_sites" and "python" to @root */
void pi_report_sites_json(struct cJSON *root, const struct pi_analysis *analysis);

/* pi_report_sites_html - the page's "Where in the code" section: memory, kernels, waits */
void pi_report_sites_html(FILE *out, const struct pi_analysis *analysis);

#endif
