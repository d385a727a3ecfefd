/* section_python_time.c - time by Python function in the reports (see section_python_time.h). */
#include "section_python_time.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sites/call_sites.h"
#include "analysis/sites/python_lines.h"
#include "analysis/sites/python_time.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "reports/format/html_flame.h"

#define TEXT_FUNCTIONS_FIRST 15 /* rows for the process with the most samples */
#define TEXT_FUNCTIONS_OTHERS 5
/* a worker's table goes on, to this many rows, until the function of the line of the user's
 * code that held it (python_lines.h): its wrappers (_worker_loop, BaseProcess.run, and the
 * parent's frames a fork copied) take the first rows */
#define TEXT_FUNCTIONS_TO_USERS_LINE 30
#define TEXT_PROCESSES 4
#define JSON_FUNCTIONS 200
#define HTML_FUNCTIONS 25

static int by_samples(const void *a, const void *b)
{
    const struct pi_python_profile *x = *(const struct pi_python_profile *const *)a;
    const struct pi_python_profile *y = *(const struct pi_python_profile *const *)b;
    return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

/* Up to @max profiles, most samples first: the training process before its workers. */
static size_t ordered(const struct pi_analysis *a, const struct pi_python_profile **out, size_t max)
{
    const struct pi_python_time *t = a->python_time;
    if (!t || !t->profile_count)
        return 0;
    const struct pi_python_profile **all = malloc(t->profile_count * sizeof(*all));
    if (!all)
        return 0;
    for (size_t i = 0; i < t->profile_count; i++)
        all[i] = &t->profiles[i];
    qsort(all, t->profile_count, sizeof(*all), by_samples);
    size_t n = t->profile_count < max ? t->profile_count : max;
    for (size_t i = 0; i < n; i++)
        out[i] = all[i];
    free(all);
    return n;
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int by_work_self(const void *a, const void *b)
{
    const struct pi_python_function *x = *(const struct pi_python_function *const *)a;
    const struct pi_python_function *y = *(const struct pi_python_function *const *)b;
    if (x->work_self_ns != y->work_self_ns)
        return x->work_self_ns < y->work_self_ns ? 1 : -1;
    return x->inclusive_ns < y->inclusive_ns ? 1 : x->inclusive_ns > y->inclusive_ns ? -1 : 0;
}

/* The profile's functions where the job's own time went: by self time outside imports, the
 * import machinery's frames left out (their time is the "imports" line). Caller frees. */
static const struct pi_python_function **by_self_time(const struct pi_python_profile *p,
                                                      size_t *count)
{
    *count = 0;
    const struct pi_python_function **rows = malloc((p->function_count + 1) * sizeof(*rows));
    if (!rows)
        return NULL;
    for (size_t i = 0; i < p->function_count; i++)
        if (!pi_python_import_frame(p->functions[i].file))
            rows[(*count)++] = &p->functions[i];
    qsort(rows, *count, sizeof(*rows), by_work_self);
    return rows;
}

void pi_report_python_time_text(FILE *out, const struct pi_analysis *a)
{
    const struct pi_python_profile *profiles[TEXT_PROCESSES] = {0};
    size_t n = ordered(a, profiles, TEXT_PROCESSES);
    for (size_t k = 0; k < n; k++) {
        const struct pi_python_profile *p = profiles[k];
        const struct pi_process_info *process = &a->processes[p->process];
        fprintf(out, "\nPYTHON TIME (pid %d, main thread: %s in %" PRIu64
                     " samples; by self time, the function itself running, not what it called; "
                     "imports apart)\n",
                process->header.pid, pi_format_ns((double)p->sampled_ns), p->samples);
        fprintf(out, "  %9s %6s %9s %6s  %s\n", "self", "", "inclusive", "", "function");
        size_t count;
        const struct pi_python_function **rows = by_self_time(p, &count);
        size_t shown = k == 0 ? TEXT_FUNCTIONS_FIRST : TEXT_FUNCTIONS_OTHERS;
        /* a worker's table goes on to the function of its user's line */
        const struct pi_python_lines *lines = process->python_lines;
        int reached = k == 0 || !lines || !lines->count;
        for (size_t i = 0; rows && i < count && rows[i]->work_self_ns &&
                           (i < shown || (!reached && i < TEXT_FUNCTIONS_TO_USERS_LINE));
             i++) {
            const struct pi_python_function *f = rows[i];
            reached = reached || (strcmp(f->function, lines->lines[0].function) == 0 &&
                                  strcmp(f->file, lines->lines[0].file) == 0);
            fprintf(out, "  %9s %5.1f%% %9s %5.1f%%  %s (%s)\n",
                    pi_format_ns((double)f->work_self_ns), share(f->work_self_ns, p->sampled_ns),
                    pi_format_ns((double)f->inclusive_ns), share(f->inclusive_ns, p->sampled_ns),
                    f->function, pi_call_site_short_file(f->file));
        }
        free(rows);
        if (p->import_ns)
            fprintf(out, "  %9s %5.1f%% imports: modules loading (the import machinery and the "
                         "modules' own top-level code)\n",
                    pi_format_ns((double)p->import_ns), share(p->import_ns, p->sampled_ns));
        if (p->outside_ns)
            fprintf(out, "  %9s %5.1f%% in no Python function (the interpreter starting or ending)\n",
                    pi_format_ns((double)p->outside_ns), share(p->outside_ns, p->sampled_ns));
        if (p->unknown_ns)
            fprintf(out, "  %9s %5.1f%% in samples whose frames were not kept (stack table full)\n",
                    pi_format_ns((double)p->unknown_ns), share(p->unknown_ns, p->sampled_ns));
    }
}

void pi_report_python_time_json(cJSON *root, const struct pi_analysis *a)
{
    cJSON *list = cJSON_AddArrayToObject(root, "python_time");
    const struct pi_python_time *t = a->python_time;
    for (size_t i = 0; t && i < t->profile_count; i++) {
        const struct pi_python_profile *p = &t->profiles[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pid", a->processes[p->process].header.pid);
        cJSON_AddNumberToObject(o, "sampled_ns", (double)p->sampled_ns);
        cJSON_AddNumberToObject(o, "samples", (double)p->samples);
        cJSON_AddNumberToObject(o, "outside_ns", (double)p->outside_ns);
        cJSON_AddNumberToObject(o, "unknown_ns", (double)p->unknown_ns);
        cJSON_AddNumberToObject(o, "import_ns", (double)p->import_ns);
        cJSON *functions = cJSON_AddArrayToObject(o, "functions");
        for (size_t k = 0; k < p->function_count && k < JSON_FUNCTIONS; k++) {
            const struct pi_python_function *f = &p->functions[k];
            cJSON *fo = cJSON_CreateObject();
            cJSON_AddStringToObject(fo, "function", f->function);
            cJSON_AddStringToObject(fo, "file", f->file);
            cJSON_AddNumberToObject(fo, "inclusive_ns", (double)f->inclusive_ns);
            cJSON_AddNumberToObject(fo, "self_ns", (double)f->self_ns);
            cJSON_AddNumberToObject(fo, "work_self_ns", (double)f->work_self_ns);
            cJSON_AddNumberToObject(fo, "samples", (double)f->samples);
            cJSON_AddItemToArray(functions, fo);
        }
        cJSON_AddItemToArray(list, o);
    }
}

void pi_report_python_time_html(FILE *out, const struct pi_analysis *a)
{
    const struct pi_python_profile *profiles[1] = {0};
    if (!ordered(a, profiles, 1))
        return;
    const struct pi_python_profile *p = profiles[0];
    fprintf(out, "<h2>Time by Python function</h2>\n<p>pid %d, main thread: %s in %" PRIu64
                 " samples; inclusive time counts what a function called.</p>\n"
                 "<table id=\"python-time\"><tr><th>inclusive</th><th>%%</th><th>self</th>"
                 "<th>%%</th><th>function</th><th>file</th></tr>\n",
            a->processes[p->process].header.pid, pi_format_ns((double)p->sampled_ns), p->samples);
    for (size_t i = 0; i < p->function_count && i < HTML_FUNCTIONS; i++) {
        const struct pi_python_function *f = &p->functions[i];
        fprintf(out, "<tr><td>%s</td><td>%.1f</td>", pi_format_ns((double)f->inclusive_ns),
                share(f->inclusive_ns, p->sampled_ns));
        fprintf(out, "<td>%s</td><td>%.1f</td><td>", pi_format_ns((double)f->self_ns),
                share(f->self_ns, p->sampled_ns));
        pi_html_text(out, f->function);
        fputs("</td><td>", out);
        pi_html_text(out, pi_call_site_short_file(f->file));
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

void pi_report_python_time_flame(FILE *out, const struct pi_analysis *a,
                                 const struct pi_process_info *p)
{
    const struct pi_python_profile *profile = p ? pi_python_time_of(a, p) : NULL;
    if (profile && profile->tree.count && profile->tree.nodes[0].weight) {
        char title[200];
        snprintf(title, sizeof(title), "Time of the main thread by Python call path (pid %d, %s "
                 "sampled)", p->header.pid, pi_format_ns((double)profile->tree.nodes[0].weight));
        pi_html_flame(out, "flame-time", title, &profile->tree, 0);
    } else {
        fputs("<h2>Time by Python call path</h2>\n<p id=\"flame-time-none\">no Python time "
              "samples for the training process</p>\n", out);
    }
}
