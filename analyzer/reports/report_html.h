/*
 * report_html.h - the sections of the HTML page that have a file of their own.
 */
#ifndef PI_REPORT_HTML_H
#define PI_REPORT_HTML_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

/* pi_html_threads_over_time - a row per thread, what it mostly did in each bucket of the run
 * (report_html_threads.c) */
void pi_html_threads_over_time(FILE *out, const struct pi_analysis *analysis);

#endif
