/*
 * section_capture_windows.c - what the figures cover when a process was
 * recorded in capture windows (PROFINJECT_WINDOW, profinject ctl): the
 * windows from its start, in the text and JSON reports.
 */
#include "section_capture_windows.h"

#include <cjson/cJSON.h>
#include <inttypes.h>

/* The capture windows the figures cover, from each process's start. */
void pi_report_capture_windows_text(FILE *out, const struct pi_analysis *a)
{
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (!p->window_count)
            continue;
        fprintf(out, "\nCAPTURE WINDOWS of pid %d (times and shares cover these only):",
                p->header.pid);
        uint64_t origin = p->header.start_monotonic_ns;
        for (size_t w = 0; w < p->window_count; w++)
            fprintf(out, "%s %.3f s to %.3f s", w ? "," : "",
                    (double)(p->windows[w].start_ns - origin) / 1e9,
                    (double)(p->windows[w].end_ns - origin) / 1e9);
        fprintf(out, " after its start (%.3f s recorded)\n", (double)p->window_ns / 1e9);
    }
}


void pi_report_capture_windows_json(cJSON *o, const struct pi_process_info *p)
{
    if (!p->window_count)
        return;
    /* what the times cover: the capture windows, from the process's start */
    cJSON *windows = cJSON_AddArrayToObject(o, "windows");
    uint64_t origin = p->header.start_monotonic_ns;
    for (size_t i = 0; i < p->window_count; i++) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddNumberToObject(w, "start_ns", (double)(p->windows[i].start_ns - origin));
        cJSON_AddNumberToObject(w, "end_ns", (double)(p->windows[i].end_ns - origin));
        cJSON_AddItemToArray(windows, w);
    }
    cJSON_AddNumberToObject(o, "recorded_ns", (double)p->window_ns);
}
