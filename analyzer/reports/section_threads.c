/*
 * section_threads.c - where each thread's time went, in every report: its
 * share of wall time by class (data, file and other I/O, locks, sync,
 * sleep, CPU, other) in text, JSON and a bar per thread on the page; and
 * the page's threads over time: one row per thread, each bucket of its
 * timeline coloured by what the thread mostly did then (a wait class,
 * computing, or neither: "other", by the main thread's sampled clock, or
 * for another thread by the kernel's count of its CPU time spread over the
 * time its waits leave).
 */
#include "section_threads.h"

#include <cjson/cJSON.h>
#include <inttypes.h>

#include "analysis/host/thread_timeline.h"
#include "analysis/host/threads.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "reports/format/html_plot.h"

#define SHOWN_THREADS 16

struct shown_thread {
    const struct pi_process_info *process;
    const struct pi_thread_info *thread;
};

/* The threads the text and the page show, in process order: the first SHOWN_THREADS that
 * pi_thread_listed lists. */
static size_t shown_threads(const struct pi_analysis *a, struct shown_thread *shown)
{
    size_t n = 0;
    for (size_t i = 0; i < a->process_count && n < SHOWN_THREADS; i++) {
        const struct pi_process_info *p = &a->processes[i];
        for (size_t k = 0; k < p->thread_count && n < SHOWN_THREADS; k++)
            if (pi_thread_listed(p, &p->threads[k]))
                shown[n++] = (struct shown_thread){p, &p->threads[k]};
    }
    return n;
}

void pi_report_threads_text(FILE *out, const struct pi_analysis *a)
{
    fprintf(out, "\nTIME BY THREAD (share of each thread's wall time)\n");
    fprintf(out, "  %7s %7s %-16s %10s %6s %6s %6s %6s %6s %6s %6s %6s\n", "pid", "tid",
            "name", "wall", "data", "file", "oth-io", "locks", "sync", "sleep", "cpu", "other");
    struct shown_thread shown[SHOWN_THREADS];
    size_t n = shown_threads(a, shown);
    for (size_t i = 0; i < n; i++) {
        const struct pi_process_info *p = shown[i].process;
        const struct pi_thread_info *t = shown[i].thread;
        double wall = (double)pi_thread_wall_ns(p, t);
        fprintf(out, "  %7d %7u %-16.16s %10s", p->header.pid, t->tid,
                t->name[0] ? t->name : ((int)t->tid == p->header.pid ? "(main)" : "-"),
                pi_format_ns(wall));
        for (int c = 0; c < PI_TIME_CLASS_COUNT; c++)
            fprintf(out, " %5.1f%%", 100 * pi_thread_time_ns(p, t, c) / wall);
        fputc('\n', out);
    }
}

void pi_report_threads_json(cJSON *process, const struct pi_process_info *p)
{
    cJSON *threads = cJSON_AddArrayToObject(process, "threads");
    for (size_t i = 0; i < p->thread_count; i++) {
        const struct pi_thread_info *t = &p->threads[i];
        cJSON *th = cJSON_CreateObject();
        cJSON_AddNumberToObject(th, "tid", t->tid);
        cJSON_AddStringToObject(th, "name", t->name);
        cJSON_AddBoolToObject(th, "main", (int)t->tid == p->header.pid);
        cJSON_AddNumberToObject(th, "wall_ns", (double)pi_thread_wall_ns(p, t));
        cJSON_AddNumberToObject(th, "events", (double)t->events);
        cJSON *time = cJSON_AddObjectToObject(th, "time_ns");
        for (int c = 0; c < PI_TIME_CLASS_COUNT; c++)
            cJSON_AddNumberToObject(time, pi_time_class_names[c],
                                    (double)pi_thread_time_ns(p, t, c));
        cJSON_AddItemToArray(threads, th);
    }
}

void pi_report_threads_html(FILE *out, const struct pi_analysis *a)
{
    fprintf(out, "<h2>Where each thread's time went</h2>\n<svg id=\"thread-breakdown\" width=\"%d\" "
                 "height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">\n",
            PLOT_W + 2 * MARGIN + 100, 40 + 22 * SHOWN_THREADS);
    for (int c = 0; c < PI_TIME_CLASS_COUNT; c++)
        fprintf(out, "<rect x=\"%d\" y=\"4\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                     "<text x=\"%d\" y=\"14\" font-size=\"11\">%s</text>\n",
                160 + 90 * c, pi_html_time_colors[c], 176 + 90 * c, pi_time_class_names[c]);
    struct shown_thread shown[SHOWN_THREADS];
    size_t n = shown_threads(a, shown);
    for (size_t row = 0; row < n; row++) {
        const struct pi_process_info *p = shown[row].process;
        const struct pi_thread_info *t = shown[row].thread;
        double wall = (double)pi_thread_wall_ns(p, t);
        int y = 28 + 22 * (int)row;
        char name[13];
        snprintf(name, sizeof(name), "%.12s", t->name);
        fprintf(out, "<text x=\"4\" y=\"%d\" font-size=\"11\">%d/%u ", y + 13,
                p->header.pid, t->tid);
        pi_html_text(out, name); /* the application names its threads */
        fputs("</text>\n", out);
        double x = 160;
        for (int c = 0; c < PI_TIME_CLASS_COUNT; c++) {
            double share = (double)pi_thread_time_ns(p, t, c) / wall;
            if (share <= 0)
                continue;
            double w = share * PLOT_W;
            fprintf(out, "<rect class=\"segment\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                         "height=\"18\" fill=\"%s\"><title>%s %.1f%%</title></rect>\n",
                    x, y, w, pi_html_time_colors[c], pi_time_class_names[c], 100 * share);
            x += w;
        }
    }
    fputs("</svg>\n", out);
}

#define ROWS PI_TIMELINE_THREADS_DRAWN /* the threads whose timelines the pass kept */
#define ROW_H 16
#define LABEL_W 160

/* The class the thread spent most of [@from, @to) in, and that share. CPU is what the waits
 * leave, or, where the main thread's clock samples cover the bucket, what they say it used,
 * else the thread's CPU time over its life at @cpu_rate of what its waits left (negative:
 * not known): the rest of what the waits leave is then "other" (ready to run without a CPU,
 * or blocked where no hook sees: a server thread in accept()). @cpu_share: the CPU's share
 * by the clock's samples, negative when not sampled. */
static unsigned dominant(const struct pi_thread_timeline *tl, unsigned bucket, uint64_t from,
                         uint64_t to, double cpu_rate, double *share, double *cpu_share)
{
    double length = (double)(to - from) / 1000.0, waited = 0, best = 0;
    unsigned which = PI_TIME_CPU;
    for (unsigned c = 0; tl && c < PI_TIME_CPU; c++) {
        waited += tl->waited_us[bucket][c];
        if (tl->waited_us[bucket][c] > best) {
            best = tl->waited_us[bucket][c];
            which = c;
        }
    }
    double left = length > waited ? length - waited : 0, cpu = left, other = 0;
    *cpu_share = -1;
    if (tl && tl->cpu && tl->cpu->measured_us[bucket]) { /* the clock's rate where sampled */
        double used = (double)tl->cpu->cpu_us[bucket] * length / tl->cpu->measured_us[bucket];
        cpu = used < left ? used : left;
        other = left - cpu;
        *cpu_share = length > 0 ? cpu / length : 0;
    } else if (cpu_rate >= 0) {
        cpu = left * cpu_rate;
        other = left - cpu;
    }
    if (cpu >= best) {
        which = PI_TIME_CPU;
        best = cpu;
    }
    if (other > best) {
        which = PI_TIME_OTHER;
        best = other;
    }
    *share = length > 0 ? (best > length ? 1.0 : best / length) : 0;
    return which;
}

static void thread_row(FILE *out, const struct pi_analysis *a, const struct pi_process_info *p,
                       const struct pi_thread_info *t, int y, double span)
{
    fprintf(out, "<text x=\"4\" y=\"%d\" font-size=\"11\">%d/%u ", y + 12, p->header.pid, t->tid);
    pi_html_text(out, t->name); /* the application names its threads */
    fputs("</text>\n", out);
    int main = (int)t->tid == p->header.pid;
    uint64_t first = main ? p->start_ns : t->first_ns, last = main ? p->end_ns : t->last_ns;
    const struct pi_thread_timeline *tl = t->timeline;
    /* the kernel's count of its CPU time against the time its waits left, where measured */
    double cpu = (double)pi_thread_time_ns(p, t, PI_TIME_CPU);
    double other = (double)pi_thread_time_ns(p, t, PI_TIME_OTHER);
    double cpu_rate = cpu + other > 0 && !main ? cpu / (cpu + other) : -1;
    uint64_t start = tl ? tl->start_ns : first;
    uint64_t width = tl ? tl->bucket_ns : (last - first + 1);
    for (unsigned b = 0; b < PI_TIMELINE_BUCKETS; b++) {
        uint64_t from = start + b * width, to = from + width;
        if (from < first)
            from = first;
        if (to > last)
            to = last;
        if (from >= to) {
            if (start + b * width >= last)
                break;
            continue;
        }
        double share, cpu_share;
        unsigned c = dominant(tl, b, from, to, cpu_rate, &share, &cpu_share);
        double x = LABEL_W + PLOT_W * (double)(from - a->base_ns) / span;
        double w = PLOT_W * (double)(to - from) / span;
        fprintf(out, "<rect class=\"tl\" data-tid=\"%u\" data-class=\"%s\" data-from-ns=\"%" PRIu64
                     "\" data-to-ns=\"%" PRIu64 "\"",
                t->tid, pi_time_class_names[c], from - a->base_ns, to - a->base_ns);
        if (cpu_share >= 0)
            fprintf(out, " data-cpu-share=\"%.4f\"", cpu_share);
        fprintf(out, " x=\"%.1f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
                     "fill-opacity=\"%.2f\"><title>%.3f s: %s %.0f%%</title></rect>\n",
                x, y, w, ROW_H - 2, pi_html_time_colors[c], 0.35 + 0.65 * share,
                (double)(from - a->base_ns) / 1e9, pi_time_class_names[c], 100 * share);
        if (!tl)
            break; /* no waits: one bar over its life */
    }
}

void pi_report_threads_over_time_html(FILE *out, const struct pi_analysis *a)
{
    double span = a->end_ns > a->base_ns ? (double)(a->end_ns - a->base_ns) : 1;
    fprintf(out, "<h2>Threads over time</h2>\n<p>Each bucket shows what the thread mostly did "
                 "then (stronger colour: a larger share); positions from the first process's "
                 "start, %.2f s across. A main thread's CPU is its clock's, read beside each "
                 "memory sample; another thread's is its CPU time (the kernel's count, where it ended "
                 "cleanly) spread over the time its waits leave, the rest 'other'.</p>\n<p>",
            span / 1e9);
    for (int c = 0; c < PI_TIME_CLASS_COUNT; c++)
        fprintf(out, "<span style=\"color:%s\">&#9632;</span> %s &nbsp;", pi_html_time_colors[c],
                pi_time_class_names[c]);
    fprintf(out, "</p>\n<svg id=\"threads-over-time\" width=\"%d\" height=\"%d\" "
                 "xmlns=\"http://www.w3.org/2000/svg\">\n",
            LABEL_W + PLOT_W + 10, 10 + ROW_H * ROWS);
    int row = 0;
    for (size_t i = 0; i < a->process_count && row < ROWS; i++) {
        const struct pi_process_info *p = &a->processes[i];
        for (size_t k = 0; k < p->thread_count && row < ROWS; k++) {
            const struct pi_thread_info *t = &p->threads[k];
            if (!pi_thread_timeline_drawable(p, t))
                continue;
            thread_row(out, a, p, t, 4 + ROW_H * row++, span);
        }
    }
    fputs("</svg>\n", out);
}
