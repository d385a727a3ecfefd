/*
 * section_processes.c - each process of the job in every report: its
 * identity (pid as it saw itself and on the host, parent, command, how it
 * ended), its memory (RSS peak and growth, PSS where it read it) and CPU
 * time; the tree's host memory above them (section_host_memory.c); on the
 * page, RSS over time of the processes that held the most.
 */
#include "section_processes.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec_images.h"
#include "reports/format/call_site_format.h"
#include "reports/format/figures.h"
#include "reports/format/format.h"
#include "reports/format/html_plot.h"
#include "section_host_memory.h"
#include "verdicts/process_words.h"

/* "[exec 2/4] " when @place is one image of a chain of execs (the same pid, several files). */
static const char *exec_image(const struct pi_exec_image *place, char *out, size_t size)
{
    if (!place || place->images < 2)
        return "";
    snprintf(out, size, "[exec %zu/%zu] ", place->index + 1, place->images);
    return out;
}

void pi_report_processes_text(FILE *out, const struct pi_analysis *a)
{
    fprintf(out, "\nMEMORY AND CPU BY PROCESS\n");
    pi_report_host_memory_text(out, a);
    int contained = 0, pss = 0; /* pss: a column where a process read its PSS (format 8) */
    for (size_t i = 0; i < a->process_count; i++) {
        contained |= pi_process_host_pid(&a->processes[i]) != 0;
        pss |= a->processes[i].pss.count > 0;
    }
    if (contained)
        fprintf(out, "  %7s", "host pid");
    fprintf(out, "  %7s %7s %10s %10s", "pid", "ppid", "rss peak", "at");
    if (pss)
        fprintf(out, " %10s", "pss peak");
    fprintf(out, " %12s %12s %10s %10s  %s\n", "growth", "2nd half", "user cpu", "sys cpu",
            "command");
    struct pi_exec_image *images = pi_exec_images(a);
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        uint64_t middle = p->start_ns + (p->end_ns - p->start_ns) / 2;
        char whole[32], half[32];
        snprintf(whole, sizeof(whole), "%.2f MB/s", pi_series_slope(&p->rss, 0) / 1e6);
        snprintf(half, sizeof(half), "%.2f MB/s", pi_series_slope(&p->rss, middle) / 1e6);
        char image[32], host_pid[16] = "-";
        if (pi_process_host_pid(p))
            snprintf(host_pid, sizeof(host_pid), "%d", pi_process_host_pid(p));
        if (contained)
            fprintf(out, "  %8s", host_pid);
        uint64_t peak_at = p->rss_peak_ns > a->base_ns ? p->rss_peak_ns - a->base_ns : 0;
        fprintf(out, "  %7d %7d %10s %10s", p->header.pid, p->header.ppid,
                pi_format_bytes((double)p->rss_peak), pi_format_ns((double)peak_at));
        if (pss)
            fprintf(out, " %10s", p->pss.count ? pi_format_bytes((double)p->pss_peak) : "-");
        fprintf(out, " %12s %12s %10s %10s  %s%.40s\n", whole, half,
                pi_format_ns((double)p->cpu_user_ns), pi_format_ns((double)p->cpu_sys_ns),
                exec_image(images ? &images[i] : NULL, image, sizeof(image)), p->command);
    }
    free(images);
}

cJSON *pi_report_process_json(const struct pi_analysis *a, const struct pi_process_info *p)
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
    if (p->inherited_unresolved)
        cJSON_AddStringToObject(o, "inherited_unresolved", p->inherited_unresolved);
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
    /* the threads a fatal signal found blocked, in a wait that never ended */
    cJSON *blocked = cJSON_AddArrayToObject(end, "blocked");
    for (size_t i = 0; i < p->blocked_count; i++) {
        const struct pi_blocked_thread *b = &p->blocked[i];
        char words[700];
        pi_blocked_words(b, words, sizeof(words));
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "tid", b->tid);
        cJSON_AddStringToObject(t, "in", words);
        cJSON_AddNumberToObject(t, "since_ns", (double)(b->since_ns - a->base_ns));
        cJSON_AddNumberToObject(t, "for_ns", (double)b->for_ns);
        const struct pi_call_site *site = b->site;
        if (site && site->headline)
            cJSON_AddStringToObject(t, "line", site->headline);
        else
            cJSON_AddNullToObject(t, "line");
        if (site && site->python_count && site->frames[0].function)
            cJSON_AddStringToObject(t, "call", site->frames[0].function);
        else
            cJSON_AddNullToObject(t, "call");
        if (site && site->text)
            cJSON_AddStringToObject(t, "frames", site->text);
        cJSON_AddItemToArray(blocked, t);
    }
    cJSON_AddNumberToObject(o, "children", (double)p->children);
    return o;
}

void pi_report_process_usage_json(cJSON *o, const struct pi_analysis *a,
                                   const struct pi_process_info *p)
{
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
    pi_series_json(memory, "rss_samples", &p->rss, a->base_ns);
    pi_report_process_pss_json(memory, a, p);
    cJSON *cpu = cJSON_AddObjectToObject(o, "cpu");
    cJSON_AddNumberToObject(cpu, "user_ns", (double)p->cpu_user_ns);
    cJSON_AddNumberToObject(cpu, "system_ns", (double)p->cpu_sys_ns);
    cJSON_AddNumberToObject(cpu, "profiler_ns", (double)p->profiler_cpu_ns);
}

#define MEMORY_LINES 16

void pi_report_processes_memory_html(FILE *out, const struct pi_analysis *a)
{
    uint64_t peak = 1;
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].rss_peak > peak)
            peak = a->processes[i].rss_peak;
    double span = (double)(a->end_ns > a->base_ns ? a->end_ns - a->base_ns : 1);
    pi_html_axis_frame(out, "memory-plot", "Memory over time (RSS per process)", "time (s)", "RSS (MB)");
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.0f</text>\n",
            MARGIN - 4, MARGIN + 4, (double)peak / 1e6);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.2f</text>\n",
            MARGIN + PLOT_W, MARGIN + PLOT_H + 14, span / 1e9);
    /* the processes that held the most: a line each is readable up to a dozen or so, and a
     * job of hundreds of ranks keeps the page small */
    uint64_t least = 0;
    if (a->process_count > MEMORY_LINES) {
        uint64_t *peaks = malloc(a->process_count * sizeof(*peaks));
        for (size_t i = 0; peaks && i < a->process_count; i++)
            peaks[i] = a->processes[i].rss_peak;
        if (peaks) {
            pi_sort_u64(peaks, a->process_count);
            least = peaks[a->process_count - MEMORY_LINES];
        }
        free(peaks);
        fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">the %d processes of %zu "
                     "with the highest peaks</text>\n",
                MARGIN, MARGIN - 6, MEMORY_LINES, a->process_count);
    }
    for (size_t i = 0, drawn = 0; i < a->process_count && drawn < MEMORY_LINES; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (p->rss.count == 0 || p->rss_peak < least)
            continue;
        drawn++;
        const char *color = pi_html_colors[i % PI_HTML_COLOR_COUNT];
        fprintf(out, "<polyline class=\"rss\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                color);
        pi_html_series_points(out, &p->rss, a->base_ns, span, (double)peak);
        fprintf(out, "\"><title>pid %d</title></polyline>\n", p->header.pid);
        fprintf(out, "<text x=\"%d\" y=\"%zu\" font-size=\"11\" fill=\"%s\">pid %d</text>\n",
                MARGIN + PLOT_W + 4, MARGIN + 12 + 14 * ((drawn - 1) % 14), color, p->header.pid);
    }
    fputs("</svg>\n", out);
}

/* Each process as it saw itself and, in a container, as the host saw it. */
void pi_report_processes_html(FILE *out, const struct pi_analysis *a)
{
    fputs("<h2>Processes</h2>\n<table id=\"processes\"><tr><th>pid</th><th>host pid</th>"
          "<th>ppid</th><th>peak RSS</th><th>command</th></tr>\n", out);
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        fprintf(out, "<tr><td>%d</td><td>", p->header.pid);
        if (pi_process_host_pid(p))
            fprintf(out, "%d", pi_process_host_pid(p));
        else
            fputs("same", out);
        fprintf(out, "</td><td>%d</td><td>%s</td><td style=\"text-align:left\">", p->header.ppid,
                pi_format_bytes((double)p->rss_peak));
        pi_html_text(out, p->command ? p->command : "");
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}
