/* section_native_time.c - CPU time by native operator in the reports (see section_native_time.h). */
#include "section_native_time.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sites/native_time.h"
#include "reports/format/format.h"

#define TEXT_PROCESSES 3
#define TEXT_OPERATORS 10
#define JSON_ROWS 200

static int by_sampled(const void *a, const void *b)
{
    const struct pi_process_info *x = *(const struct pi_process_info *const *)a;
    const struct pi_process_info *y = *(const struct pi_process_info *const *)b;
    return x->native_time->sampled_ns < y->native_time->sampled_ns   ? 1
           : x->native_time->sampled_ns > y->native_time->sampled_ns ? -1
                                                                     : 0;
}

static void process_text(FILE *out, const struct pi_process_info *p)
{
    const struct pi_native_time *t = p->native_time;
    struct pi_native_operator *sums;
    uint64_t total;
    size_t count = pi_native_time_by_operator(t, NULL, NULL, 0, &sums, &total);
    fprintf(out, "\nNATIVE CPU (pid %d: %s of CPU sampled on its threads every %s of each "
                 "one's CPU; by operator, all threads together, over the whole run)\n",
            p->header.pid, pi_format_ns((double)t->sampled_ns),
            t->samples ? pi_format_ns((double)t->sampled_ns / (double)t->samples) : "-");
    for (size_t k = 0; k < count && k < TEXT_OPERATORS; k++)
        fprintf(out, "  %9s %5.1f%%  %s%s\n", pi_format_ns((double)sums[k].ns),
                100.0 * (double)sums[k].ns / (double)t->sampled_ns, sums[k].name,
                sums[k].tid > 1 ? " (several threads)" : "");
    if (t->profiler_ns)
        fprintf(out, "  %9s %5.1f%%  in the profiler's own code\n",
                pi_format_ns((double)t->profiler_ns),
                100.0 * (double)t->profiler_ns / (double)t->sampled_ns);
    if (t->loader_ns)
        fprintf(out, "  %9s %5.1f%%  not walked: the library loader's list was locked\n",
                pi_format_ns((double)t->loader_ns),
                100.0 * (double)t->loader_ns / (double)t->sampled_ns);
    if (t->lost_ns)
        fprintf(out, "  %9s of samples lost (no room to keep them)\n",
                pi_format_ns((double)t->lost_ns));
    free(sums);
}

void pi_report_native_time_text(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info **sampled = malloc((a->process_count + 1) * sizeof(*sampled));
    if (!sampled)
        return;
    size_t n = 0;
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].native_time && a->processes[i].native_time->sampled_ns)
            sampled[n++] = &a->processes[i];
    qsort(sampled, n, sizeof(*sampled), by_sampled);
    for (size_t i = 0; i < n && i < TEXT_PROCESSES; i++)
        process_text(out, sampled[i]);
    free(sampled);
}

void pi_report_native_time_json(cJSON *root, const struct pi_analysis *a)
{
    cJSON *list = cJSON_AddArrayToObject(root, "native_time");
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_native_time *t = a->processes[i].native_time;
        if (!t)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pid", a->processes[i].header.pid);
        cJSON_AddNumberToObject(o, "sampled_ns", (double)t->sampled_ns);
        cJSON_AddNumberToObject(o, "samples", (double)t->samples);
        cJSON_AddNumberToObject(o, "profiler_ns", (double)t->profiler_ns);
        cJSON_AddNumberToObject(o, "unnamed_ns", (double)t->unnamed_ns);
        cJSON_AddNumberToObject(o, "loader_ns", (double)t->loader_ns);
        cJSON_AddNumberToObject(o, "lost_ns", (double)t->lost_ns);
        cJSON *rows = cJSON_AddArrayToObject(o, "operators");
        for (size_t k = 0; k < t->count && k < JSON_ROWS; k++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "operator", t->operators[k].name);
            cJSON_AddNumberToObject(r, "tid", t->operators[k].tid);
            cJSON_AddNumberToObject(r, "ns", (double)t->operators[k].ns);
            cJSON_AddNumberToObject(r, "samples", (double)t->operators[k].samples);
            if (t->steady_known) /* inside the steady steps (the verdict's figures) */
                cJSON_AddNumberToObject(r, "steady_ns", (double)t->operators[k].steady_ns);
            cJSON_AddItemToArray(rows, r);
        }
        cJSON_AddItemToArray(list, o);
    }
}
