/*
 * report_json.c - the report for machines: the same content as the text
 * report, schema "profinject-report" version 1, documented field by field
 * in analyzer/REPORT.md. Times are integer nanoseconds, sizes bytes.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/host/steps.h"
#include "reports/format/call_site_format.h"
#include "report.h"
#include "section_collectives.h"
#include "section_device_memory.h"
#include "section_gpu.h"
#include "section_host_memory.h"
#include "section_latency.h"
#include "section_summary_mode.h"
#include "section_python_time.h"
#include "section_ranks.h"
#include "section_sites.h"
#include "section_steps.h"
#include "section_threads.h"
#include "section_verdict.h"
#include "reports/format/output_file.h"
#include "reports/format/quantiles.h"
#include "reports/format/terminal_text.h"
#include "verdicts/verdict.h"

/* 2: a call site's "stack" is an object of frames and text (it was the text) */
#define JSON_SCHEMA_VERSION 2

static cJSON *process_json(struct pi_analysis *a, struct pi_process_info *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pid", p->header.pid);
    cJSON_AddNumberToObject(o, "ppid", p->header.ppid);
    cJSON_AddNumberToObject(o, "outer_pid", p->header.outer_pid);
    cJSON_AddStringToObject(o, "command", p->command);
    cJSON_AddStringToObject(o, "host", p->host);
    cJSON_AddStringToObject(o, "cgroup", p->cgroup);
    cJSON_AddStringToObject(o, "file", p->path);
    cJSON_AddNumberToObject(o, "start_ns", (double)(p->start_ns - a->base_ns));
    cJSON_AddNumberToObject(o, "end_ns", (double)(p->end_ns - a->base_ns));
    cJSON_AddNumberToObject(o, "records", (double)p->records);
    cJSON_AddNumberToObject(o, "lost", (double)p->lost);
    cJSON_AddNumberToObject(o, "strings_lost", (double)p->strings_lost);
    cJSON_AddBoolToObject(o, "truncated", p->truncated);
    if (p->damaged_bytes || p->damaged_frames) { /* present only where the file was damaged */
        cJSON_AddNumberToObject(o, "damaged_bytes", (double)p->damaged_bytes);
        cJSON_AddNumberToObject(o, "damaged_frames", (double)p->damaged_frames);
    }
    cJSON *end = cJSON_AddObjectToObject(o, "end");
    cJSON_AddStringToObject(end, "reason", !p->ended                         ? "unknown"
                                           : p->end_reason == PI_END_SIGNAL  ? "signal"
                                           : p->end_reason == PI_END__EXIT   ? "_exit"
                                                                              : "exit");
    cJSON_AddNumberToObject(end, "status", (double)p->end_status);
    cJSON_AddNumberToObject(o, "children", (double)p->children);
    if (p->window_count) {
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
    pi_report_summary_mode_json(o, p);
    cJSON *memory = cJSON_AddObjectToObject(o, "memory");
    uint64_t middle = p->start_ns + (p->end_ns - p->start_ns) / 2;
    cJSON_AddNumberToObject(memory, "rss_peak_bytes", (double)p->rss_peak);
    cJSON_AddNumberToObject(memory, "rss_peak_at_ns",
                            (double)(p->rss_peak_ns > a->base_ns ? p->rss_peak_ns - a->base_ns : 0));
    cJSON_AddNumberToObject(memory, "rss_growth_bytes_per_s", pi_series_slope(&p->rss, 0));
    cJSON_AddNumberToObject(memory, "rss_growth_second_half_bytes_per_s",
                            pi_series_slope(&p->rss, middle));
    /* growth once the job runs steadily (memory_growth.c) */
    cJSON *growth = cJSON_AddObjectToObject(memory, "growth");
    const struct pi_memory_growth *g = &p->growth;
    cJSON_AddStringToObject(growth, "judged_over", g->by_steps ? "steady steps" : "last third");
    cJSON_AddNumberToObject(growth, "steady_steps", (double)g->steady_steps);
    cJSON_AddNumberToObject(growth, "device_growth_bytes_per_step", g->device_bytes_per_step);
    cJSON_AddNumberToObject(growth, "rss_growth_bytes_per_step", g->rss_bytes_per_step);
    cJSON_AddNumberToObject(growth, "device_growth_start_step", (double)g->device_start_step);
    cJSON_AddNumberToObject(growth, "rss_growth_start_step", (double)g->rss_start_step);
    cJSON_AddNumberToObject(growth, "device_growth_bytes_per_s", g->device_bytes_per_s);
    cJSON_AddNumberToObject(growth, "rss_growth_bytes_per_s", g->rss_bytes_per_s);
    cJSON *samples = cJSON_AddArrayToObject(memory, "rss_samples");
    for (uint32_t i = 0; i < p->rss.count; i++) {
        cJSON *point = cJSON_CreateArray();
        cJSON_AddItemToArray(point, cJSON_CreateNumber((double)(p->rss.t[i] - a->base_ns)));
        cJSON_AddItemToArray(point, cJSON_CreateNumber((double)p->rss.v[i]));
        cJSON_AddItemToArray(samples, point);
    }
    pi_report_process_pss_json(memory, a, p);
    cJSON *cpu = cJSON_AddObjectToObject(o, "cpu");
    cJSON_AddNumberToObject(cpu, "user_ns", (double)p->cpu_user_ns);
    cJSON_AddNumberToObject(cpu, "system_ns", (double)p->cpu_sys_ns);
    cJSON_AddNumberToObject(cpu, "profiler_ns", (double)p->profiler_cpu_ns);
    pi_report_threads_json(o, p);
    pi_report_steps_json(o, p);
    pi_report_gpu_process_json(o, p);
    pi_report_device_memory_json(o, a, p);
    return o;
}

cJSON *pi_report_json_object(struct pi_analysis *a)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "profinject-report");
    cJSON_AddNumberToObject(root, "version", JSON_SCHEMA_VERSION);
    cJSON *inputs = cJSON_AddObjectToObject(root, "inputs");
    cJSON_AddNumberToObject(inputs, "files", (double)a->process_count);
    cJSON_AddNumberToObject(inputs, "records", (double)a->records);
    cJSON_AddNumberToObject(inputs, "lost", (double)a->lost);
    cJSON_AddNumberToObject(inputs, "strings_lost", (double)a->strings_lost);
    if (a->damaged_files) {
        cJSON_AddNumberToObject(inputs, "damaged_files", (double)a->damaged_files);
        cJSON_AddNumberToObject(inputs, "damaged_bytes", (double)a->damaged_bytes);
        cJSON_AddNumberToObject(inputs, "damaged_frames", (double)a->damaged_frames);
    }
    cJSON_AddNumberToObject(inputs, "span_ns", (double)(a->end_ns - a->base_ns));
    cJSON_AddNumberToObject(inputs, "base_monotonic_ns", (double)a->base_ns);
    cJSON_AddBoolToObject(inputs, "exact", a->options.exact);
    cJSON_AddNumberToObject(inputs, "relative_error", a->options.exact ? 0 : PI_HISTOGRAM_RELATIVE_ERROR);
    pi_report_verdict_json(root, a);
    pi_report_host_memory_json(root, a);
    cJSON *processes = cJSON_AddArrayToObject(root, "processes");
    for (size_t i = 0; i < a->process_count; i++)
        cJSON_AddItemToArray(processes, process_json(a, &a->processes[i]));
    pi_report_gpu_json(root, a);
    pi_report_latency_json(root, a);
    pi_report_sites_json(root, a);
    pi_report_python_time_json(root, a);
    pi_report_ranks_json(root, a);
    pi_report_collectives_json(root, a);
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
