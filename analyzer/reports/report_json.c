/*
 * report_json.c - the report for machines: the same content as the text
 * report, schema "profinject-report" (its version below), documented field
 * by field in analyzer/REPORT.md. Times are integer nanoseconds, sizes
 * bytes. The order of the keys is set here; each section adds its own
 * (section_*.c), at the top or into each process's object. The file is
 * streamed (format/json_stream.h): a process's object, a rank's entry and
 * a section's keys are made, written and freed one after the other.
 */
#include <cjson/cJSON.h>

#include "report.h"
#include "reports/format/json_stream.h"
#include "reports/format/output_file.h"
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

/* The keys before the processes. */
static void head_json(cJSON *root, struct pi_analysis *a)
{
    cJSON_AddStringToObject(root, "schema", "profinject-report");
    cJSON_AddNumberToObject(root, "version", JSON_SCHEMA_VERSION);
    pi_report_overview_json(root, a);
    pi_report_verdict_json(root, a);
    pi_report_host_memory_json(root, a);
}

/* The sections after the processes up to the ranks, in their order, each adding its keys to
 * the root: the tree takes them all, the stream one at a time. Then the ranks and the
 * collectives, which stream an entry per rank, and the products. */
typedef void (*tail_section)(cJSON *root, const struct pi_analysis *a);
static const tail_section before_ranks[] = {
    pi_report_gpu_json,         pi_report_gpu_modules_json, pi_report_latency_json,
    pi_report_sites_json,       pi_report_python_time_json, pi_report_native_time_json,
    pi_report_phases_json,
};
#define COUNT(array) (sizeof(array) / sizeof(*(array)))

cJSON *pi_report_json_object(struct pi_analysis *a)
{
    cJSON *root = cJSON_CreateObject();
    head_json(root, a);
    cJSON *processes = cJSON_AddArrayToObject(root, "processes");
    for (size_t i = 0; i < a->process_count; i++)
        cJSON_AddItemToArray(processes, process_json(a, &a->processes[i]));
    for (size_t i = 0; i < COUNT(before_ranks); i++)
        before_ranks[i](root, a);
    pi_report_ranks_json(root, a);
    pi_report_collectives_json(root, a);
    pi_report_gemm_json(root, a);
    return root;
}

/* @section's keys written, then freed. */
static void stream_section(struct pi_json_stream *s, tail_section section,
                           const struct pi_analysis *a)
{
    cJSON *keys = cJSON_CreateObject();
    if (keys)
        section(keys, a);
    pi_json_stream_members(s, keys);
    cJSON_Delete(keys);
}

/* The same document as pi_report_json_object prints, a process and a rank at a time. */
static void stream_report(struct pi_json_stream *s, struct pi_analysis *a)
{
    pi_json_stream_open_object(s, NULL);
    cJSON *head = cJSON_CreateObject();
    if (head)
        head_json(head, a);
    pi_json_stream_members(s, head);
    cJSON_Delete(head);
    pi_json_stream_open_array(s, "processes");
    for (size_t i = 0; i < a->process_count; i++) {
        cJSON *process = process_json(a, &a->processes[i]);
        pi_json_stream_value(s, NULL, process);
        cJSON_Delete(process);
    }
    pi_json_stream_close(s);
    for (size_t i = 0; i < COUNT(before_ranks); i++)
        stream_section(s, before_ranks[i], a);
    pi_report_ranks_json_stream(s, a);
    pi_report_collectives_json_stream(s, a);
    stream_section(s, pi_report_gemm_json, a);
    pi_json_stream_close(s);
}

int pi_report_json(const char *path, struct pi_analysis *a)
{
    char temporary[4096];
    FILE *out = pi_create_temporary(path, temporary, sizeof(temporary));
    if (!out)
        return -1;
    struct pi_json_stream s;
    pi_json_stream_init(&s, out);
    stream_report(&s, a);
    return pi_commit_temporary(out, temporary, path, pi_json_stream_ok(&s));
}
