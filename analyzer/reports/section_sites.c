/* section_sites.c - Python lines in the reports (see section_sites.h). */
#include "section_sites.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <string.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/sites/python_sites.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "verdicts/process_words.h"

#define TOP_WAIT_SITES 4
#define TOP_KERNEL_SITES 2
#define HTML_KERNELS 10
#define HTML_SITES 5

static const char *frames_mode(unsigned mode)
{
    return mode == PI_PYTHON_FRAMES_HELD_AND_DEFERRED ? "held_and_deferred"
           : mode == PI_PYTHON_FRAMES_HELD            ? "held"
                                                      : "off";
}

static const struct pi_python_sites *sites(const struct pi_analysis *a)
{
    return a->python_sites;
}

void pi_report_kernel_lines(FILE *out, const struct pi_analysis *a, const char *kernel,
                            const char *indent)
{
    size_t n;
    uint64_t samples;
    const struct pi_line_stat *l = pi_kernel_launch_sites(a, kernel, &n, &samples);
    for (size_t i = 0; l && i < n && i < TOP_KERNEL_SITES; i++)
        fprintf(out, "%sfrom %s (%.0f%% of %" PRIu64 " sampled launches)\n", indent,
                l[i].site->headline, 100.0 * (double)l[i].count / (double)samples, samples);
}

/* Waits of one class at one line add up, whatever was waited in below it
 * (poll, read, the file descriptors of shared tensors): the sum of those
 * after the first of them (the list is by time), or 0 when an earlier
 * entry already stands for the line. */
static int line_total(const struct pi_python_sites *s, size_t first, uint64_t *total,
                      uint64_t *count)
{
    const struct pi_line_stat *l = &s->waits[first];
    for (size_t i = 0; i < first; i++)
        if (s->waits[i].wait_class == l->wait_class &&
            strcmp(s->waits[i].site->headline, l->site->headline) == 0)
            return 0;
    *total = *count = 0;
    for (size_t i = first; i < s->wait_count; i++)
        if (s->waits[i].wait_class == l->wait_class &&
            strcmp(s->waits[i].site->headline, l->site->headline) == 0) {
            *total += s->waits[i].total_ns;
            *count += s->waits[i].count;
        }
    return 1;
}

void pi_report_sites_text(FILE *out, const struct pi_analysis *a)
{
    const struct pi_python_sites *s = sites(a);
    if (!s)
        return;
    for (size_t i = 0; i < s->process_count; i++)
        if (s->processes[i].mode != PI_PYTHON_FRAMES_HELD_AND_DEFERRED)
            fprintf(out, "\nPython frames of pid %d (Python %u.%u): %s%s%s\n", s->processes[i].pid,
                    s->processes[i].version >> 24, (s->processes[i].version >> 16) & 0xff,
                    s->processes[i].mode == PI_PYTHON_FRAMES_OFF ? "not read" : "read in part",
                    s->processes[i].reason[0] ? ": " : "", s->processes[i].reason);
    uint64_t total, count;
    const struct pi_process_info *subject = pi_training_process(a);
    int serving = subject && subject->requests; /* inference is not training */
    for (size_t i = 0, shown = 0; i < s->wait_count && shown < TOP_WAIT_SITES; i++) {
        const struct pi_line_stat *l = &s->waits[i];
        if (!line_total(s, i, &total, &count))
            continue;
        if (!shown++)
            fprintf(out, "\nWHERE THE %s LOOP WAITS (main thread, by Python line)\n",
                    serving ? "SERVING" : "TRAINING");
        fprintf(out, "  %s %s in %" PRIu64 " waits at %s\n",
                l->wait_class == PI_TIME_DATA_WAIT ? "waiting for data" : "waiting on locks",
                pi_format_ns((double)total), count, l->site->headline);
        fprintf(out, "      most of it (%s in %" PRIu64 " waits) below:\n",
                pi_format_ns((double)l->total_ns), l->count);
        pi_call_site_text(out, l->site, "        ", "        ");
    }
}

void pi_report_sites_json(cJSON *root, const struct pi_analysis *a)
{
    const struct pi_python_sites *s = sites(a);
    cJSON *launches = cJSON_AddArrayToObject(root, "launch_sites");
    cJSON *waits = cJSON_AddArrayToObject(root, "wait_sites");
    cJSON *python = cJSON_AddArrayToObject(root, "python");
    for (size_t i = 0; s && i < s->launch_count; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kernel", s->launches[i].kernel);
        cJSON_AddNumberToObject(o, "samples", (double)s->launches[i].count);
        cJSON_AddItemToObject(o, "stack", pi_call_site_json(s->launches[i].site, ""));
        cJSON_AddItemToArray(launches, o);
    }
    for (size_t i = 0; s && i < s->wait_count; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "class", pi_time_class_names[s->waits[i].wait_class]);
        cJSON_AddNumberToObject(o, "count", (double)s->waits[i].count);
        cJSON_AddNumberToObject(o, "total_ns", (double)s->waits[i].total_ns);
        cJSON_AddItemToObject(o, "stack", pi_call_site_json(s->waits[i].site, ""));
        cJSON_AddItemToArray(waits, o);
    }
    for (size_t i = 0; s && i < s->process_count; i++) {
        const struct pi_python_process *p = &s->processes[i];
        char version[32];
        snprintf(version, sizeof(version), "%u.%u.%u", p->version >> 24, (p->version >> 16) & 0xff,
                 (p->version >> 8) & 0xff);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pid", p->pid);
        cJSON_AddStringToObject(o, "version", version);
        cJSON_AddStringToObject(o, "frames", frames_mode(p->mode));
        cJSON_AddStringToObject(o, "reason", p->reason);
        cJSON_AddItemToArray(python, o);
    }
}

static void html_memory_sites(FILE *out, const struct pi_analysis *a)
{
    char summary[160];
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_gpu_memory *m = a->processes[i].gpu;
        if (!m || (m->leak_count == 0 && m->at_peak_count == 0))
            continue;
        fprintf(out, "<h3>Device memory of pid %d</h3>\n", a->processes[i].header.pid);
        for (size_t k = 0; k < m->leak_count && k < HTML_SITES; k++) {
            snprintf(summary, sizeof(summary), "never freed: %s in %" PRIu64 " allocations from",
                     pi_format_bytes((double)m->leaks[k].bytes), m->leaks[k].count);
            pi_call_site_html(out, m->leaks[k].site, m->leaks[k].text, summary);
        }
        for (int k = 0; k < m->at_peak_count; k++) {
            snprintf(summary, sizeof(summary), "live at the peak: %s from",
                     pi_format_bytes((double)m->at_peak[k].bytes));
            pi_call_site_html(out, m->at_peak[k].site, m->at_peak[k].text, summary);
        }
    }
}

void pi_report_sites_html(FILE *out, const struct pi_analysis *a)
{
    const struct pi_python_sites *s = sites(a);
    fputs("<h2>Where in the code</h2>\n<div id=\"call-sites\">\n", out);
    html_memory_sites(out, a);
    char summary[400];
    if (s && s->launch_count) {
        fputs("<h3>Kernels by launching line (sampled launches)</h3>\n", out);
        const char *kernel = NULL;
        size_t kernels = 0;
        for (size_t i = 0; i < s->launch_count; i++) {
            const struct pi_line_stat *l = &s->launches[i];
            if (!kernel || strcmp(kernel, l->kernel) != 0) {
                if (++kernels > HTML_KERNELS)
                    break;
                kernel = l->kernel;
                fputs("<h4>", out);
                pi_html_text(out, kernel);
                fputs("</h4>\n", out);
            }
            snprintf(summary, sizeof(summary), "%" PRIu64 " sampled launches from", l->count);
            pi_call_site_html(out, l->site, "", summary);
        }
    }
    uint64_t total, count;
    if (s && s->wait_count)
        fprintf(out, "<h3>Where %s waits</h3>\n", pi_loop_name(pi_training_process(a)));
    for (size_t i = 0, shown = 0; s && i < s->wait_count && shown < HTML_SITES; i++) {
        if (!line_total(s, i, &total, &count))
            continue;
        snprintf(summary, sizeof(summary), "%s: %s in %" PRIu64 " waits at",
                 pi_time_class_names[s->waits[i].wait_class], pi_format_ns((double)total), count);
        pi_call_site_html(out, s->waits[i].site, "", summary);
        shown++;
    }
    fputs("</div>\n", out);
}
