/*
 * report_json.c - the report for machines: the same content as the text
 * report, schema "profinject-report" (its version below), documented field
 * by field in analyzer/REPORT.md. Times are integer nanoseconds, sizes
 * bytes. The order of the keys is set here; each section adds its own
 * (section_*.c), at the top or into each process's object.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "reports/format/output_file.h"
#include "reports/format/terminal_text.h"
#include "section_phases.h"
#include "section_capture_windows.h"
#include "section_collectives.h"
#include "section_gemm.h"
#include "section_device_memory.h"
#include "section_gpu.h"
#include "section_host_memory.h"
#include "section_latency.h"
#include "section_overview.h"
#include "section_processes.h"
#include "section_gpu_modules.h"
#include "section_native_time.h"
#include "section_python_time.h"
#include "section_ranks.h"
#include "section_requests.h"
#include "section_sites.h"
#include "section_spans.h"
#include "section_steps.h"
#include "section_summary_mode.h"
#include "section_threads.h"
#include "section_verdict.h"

/* 2: a call site's "stack" is an object of frames and text (it was the text) */
#define JSON_SCHEMA_VERSION 2

static cJSON *process_json(struct pi_analysis *a, struct pi_process_info *p)
{
    cJSON *o = pi_report_process_json(a, p);
    pi_report_capture_windows_json(o, p);
    pi_report_summary_mode_json(o, p);
    pi_report_process_usage_json(o, a, p);
    pi_report_threads_json(o, p);
    pi_report_steps_json(o, p);
    pi_report_spans_json(o, p);
    pi_report_requests_json(o, a, p);
    pi_report_gpu_process_json(o, p);
    pi_report_device_memory_json(o, a, p);
    return o;
}

cJSON *pi_report_json_object(struct pi_analysis *a)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "profinject-report");
    cJSON_AddNumberToObject(root, "version", JSON_SCHEMA_VERSION);
    pi_report_overview_json(root, a);
    pi_report_verdict_json(root, a);
    pi_report_host_memory_json(root, a);
    cJSON *processes = cJSON_AddArrayToObject(root, "processes");
    for (size_t i = 0; i < a->process_count; i++)
        cJSON_AddItemToArray(processes, process_json(a, &a->processes[i]));
    pi_report_gpu_json(root, a);
    pi_report_gpu_modules_json(root, a);
    pi_report_latency_json(root, a);
    pi_report_sites_json(root, a);
    pi_report_python_time_json(root, a);
    pi_report_native_time_json(root, a);
    pi_report_phases_json(root, a);
    pi_report_ranks_json(root, a);
    pi_report_collectives_json(root, a);
    pi_report_gemm_json(root, a);
    return root;
}

int pi_report_json(const char *path, struct pi_analysis *a)
{
    cJSON *root = pi_report_json_object(a);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return -1;
    size_t length = strlen(text);
    if (!pi_is_utf8(text, length)) { /* a copy only where a name is not UTF-8 */
        char *valid = pi_valid_utf8(text, length, &length);
        free(text);
        if (!valid)
            return -1;
        text = valid;
    }
    int result = pi_write_file_atomically(path, text, length);
    free(text);
    return result;
}
