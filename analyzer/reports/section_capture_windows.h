/* section_capture_windows.h - the capture windows in the reports (section_capture_windows.c). */
#ifndef PI_SECTION_CAPTURE_WINDOWS_H
#define PI_SECTION_CAPTURE_WINDOWS_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct cJSON;

/* pi_report_capture_windows_text - "CAPTURE WINDOWS" of each process recorded in windows */
void pi_report_capture_windows_text(FILE *out, const struct pi_analysis *analysis);

/* pi_report_capture_windows_json - "windows" and "recorded_ns" into @p's object @process, where
 * it was recorded in windows */
void pi_report_capture_windows_json(struct cJSON *process, const struct pi_process_info *p);

#endif
