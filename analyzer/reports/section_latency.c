/*
 * section_latency.c - how long the calls took, in every report: by total
 * time with their percentiles (I/O first, then waits and the rest), and
 * the files the job used, busiest first, the modules its imports loaded
 * counted apart; on the page the busiest calls' histograms too.
 */
#include "section_latency.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/format/call_site_format.h"
#include "reports/format/figures.h"
#include "reports/format/format.h"
#include "reports/format/html_plot.h"
#include "reports/format/kernel_labels.h"

#define TEXT_CALLS 25
#define TEXT_FILES 10
#define HTML_HISTOGRAMS 4
#define HTML_FILES 20

static void print_latency_row(FILE *out, struct pi_latency_entry *e, int width)
{
    struct pi_histogram *h = &e->durations;
    char name[256];
    snprintf(name, sizeof(name), "%s%s%s", e->name, e->detail[0] ? " " : "", e->detail);
    fprintf(out, "  %-*.*s %9" PRIu64 " %10s %10s", width, width, name, h->count,
            pi_format_ns((double)h->sum), pi_format_ns(pi_histogram_mean(h)));
    for (int q = 0; q < PI_QUANTILE_COUNT; q++)
        fprintf(out, " %10s", pi_format_ns(pi_histogram_quantile(h, pi_quantiles[q])));
    fprintf(out, " %10s\n", e->bytes ? pi_format_bytes((double)e->bytes) : "-");
}

static void print_latency_header(FILE *out, const char *first, int width)
{
    fprintf(out, "  %-*s %9s %10s %10s", width, first, "count", "total", "mean");
    for (int q = 0; q < PI_QUANTILE_COUNT; q++)
        fprintf(out, " %10s", pi_quantile_names[q]);
    fprintf(out, " %10s\n", "bytes");
}

/* A file the import system reads: Python source, bytecode, path files, extension modules. */
static int module_file(const char *path)
{
    static const char *const endings[] = {".pyc", ".py", ".pth"};
    size_t length = strlen(path);
    for (size_t i = 0; i < sizeof(endings) / sizeof(endings[0]); i++) {
        size_t e = strlen(endings[i]);
        if (length >= e && strcmp(path + length - e, endings[i]) == 0)
            return 1;
    }
    return strstr(path, ".so") && (strstr(path, "-packages/") || strstr(path, "/lib-dynload/"));
}

/* The files the job used, busiest first; the modules its imports loaded counted on one line. */
static void print_busiest_files(FILE *out, struct pi_latency_entry **list, size_t n)
{
    size_t modules = 0, shown = 0;
    double module_ns = 0;
    fprintf(out, "\nBUSIEST FILES (by total time in opens, reads, writes; module imports apart)\n");
    fprintf(out, "  %-48s %7s %10s %10s %10s %10s\n", "path", "opens", "bytes", "total", "p50",
            "p99");
    for (size_t i = 0; i < n; i++) {
        struct pi_latency_entry *e = list[i];
        if (module_file(e->name)) {
            modules++;
            module_ns += e->durations.sum;
            continue;
        }
        if (shown++ >= TEXT_FILES)
            continue;
        char name[64];
        pi_format_fit(e->name, 48, name, sizeof(name));
        fprintf(out, "  %-48s %7" PRIu64 " %10s %10s %10s %10s\n", name, e->opens,
                pi_format_bytes((double)e->bytes), pi_format_ns((double)e->durations.sum),
                pi_format_ns(pi_histogram_quantile(&e->durations, 0.5)),
                pi_format_ns(pi_histogram_quantile(&e->durations, 0.99)));
    }
    if (shown > TEXT_FILES)
        fprintf(out, "  ... and %zu more files\n", shown - TEXT_FILES);
    if (modules)
        fprintf(out, "  module imports: %zu files (.py, .pyc, extension modules), %s\n", modules,
                pi_format_ns(module_ns));
}

void pi_report_latency_text(FILE *out, const struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(&a->calls, NULL, &n);
    if (!list || n == 0) {
        free(list);
        return;
    }
    fprintf(out, "\nLATENCY (by total time%s)\n",
            a->options.exact ? ", exact" : ", within 1% relative error");
    const char *group = NULL;
    for (int pass = 0; pass < 2; pass++) {
        /* I/O first, then waits and the rest */
        for (size_t i = 0, shown = 0; i < n && shown < TEXT_CALLS; i++) {
            int is_io = strcmp(list[i]->group, "io") == 0;
            if (is_io != (pass == 0) || strcmp(list[i]->group, "gpu") == 0 ||
                strcmp(list[i]->group, "kernel") == 0 || strcmp(list[i]->group, "copy") == 0)
                continue;
            if (!group || strcmp(group, list[i]->group) != 0) {
                group = list[i]->group;
                print_latency_header(out, group, 30);
            }
            print_latency_row(out, list[i], 30);
            shown++;
        }
    }
    free(list);

    list = pi_latency_sorted(&a->files, NULL, &n);
    if (list && n)
        print_busiest_files(out, list, n);
    free(list);
}

static cJSON *latency_json(const struct pi_latency_table *table, int files,
                           const struct pi_kernel_labels *labels)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(table, NULL, &n);
    cJSON *array = cJSON_CreateArray();
    for (size_t i = 0; list && i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        if (files) {
            cJSON_AddStringToObject(e, "path", list[i]->name);
            cJSON_AddNumberToObject(e, "opens", (double)list[i]->opens);
        } else {
            cJSON_AddStringToObject(e, "group", list[i]->group);
            cJSON_AddStringToObject(e, "name", list[i]->name);
            cJSON_AddStringToObject(e, "class", list[i]->detail);
            /* a kernel's, and its GPU time's: the name its rows show */
            if (pi_kernel_entry(list[i]))
                cJSON_AddStringToObject(e, "short_name", pi_kernel_label(labels, list[i]->name));
        }
        pi_quantiles_json(e, &list[i]->durations);
        cJSON_AddNumberToObject(e, "bytes", (double)list[i]->bytes);
        cJSON_AddItemToArray(array, e);
    }
    free(list);
    return array;
}

void pi_report_latency_json(cJSON *root, const struct pi_analysis *a)
{
    struct pi_kernel_labels labels;
    pi_kernel_labels_make(a, &labels);
    cJSON_AddItemToObject(root, "latency", latency_json(&a->calls, 0, &labels));
    cJSON_AddItemToObject(root, "files", latency_json(&a->files, 1, &labels));
    pi_kernel_labels_free(&labels);
}

/* One bar per power of two of duration. */
static void histogram_plot(FILE *out, struct pi_latency_entry *e, int index)
{
    struct pi_histogram *h = &e->durations;
    uint64_t bins[64] = {0}, most = 1;
    int first = 63, last = 0;
    for (uint32_t i = h->lo; i < h->hi; i++) {
        uint64_t c = h->counts[i - h->lo];
        if (!c)
            continue;
        uint64_t low = pi_histogram_bucket_low(i);
        int bin = low ? 63 - __builtin_clzll(low) : 0;
        bins[bin] += c;
        if (bins[bin] > most)
            most = bins[bin];
        if (bin < first)
            first = bin;
        if (bin > last)
            last = bin;
    }
    if (first > last)
        return;
    char id[32], title[400];
    snprintf(id, sizeof(id), "latency-histogram-%d", index);
    snprintf(title, sizeof(title), "Latency: %s %s (%" PRIu64 " calls)", e->name, e->detail,
             h->count);
    pi_html_axis_frame(out, id, title, "duration (log2 bins)", "calls");
    double width = (double)PLOT_W / (last - first + 1);
    for (int b = first; b <= last; b++) {
        double height = PLOT_H * (double)bins[b] / (double)most;
        fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                     "fill=\"%s\"><title>%s: %" PRIu64 "</title></rect>\n",
                MARGIN + width * (b - first) + 1, MARGIN + PLOT_H - height, width - 2, height,
                pi_html_colors[index % PI_HTML_COLOR_COUNT], pi_format_ns((double)(1ull << b)), bins[b]);
        if ((b - first) % 2 == 0)
            fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%s</text>\n",
                    MARGIN + width * (b - first), MARGIN + PLOT_H + 14,
                    pi_format_ns((double)(1ull << b)));
    }
    fputs("</svg>\n", out);
}

static void latency_table(FILE *out, struct pi_latency_entry **list, size_t n)
{
    fputs("<h2>Latency</h2>\n<table id=\"latency\"><tr><th>call</th><th>class</th><th>count</th>"
          "<th>total</th>",
          out);
    for (int q = 0; q < PI_QUANTILE_COUNT; q++)
        fprintf(out, "<th>%s</th>", pi_quantile_names[q]);
    fputs("</tr>\n", out);
    for (size_t i = 0; i < n && i < 25; i++) {
        /* names of ranges, files and kernels come from the application */
        fprintf(out, "<tr><td>%s ", list[i]->group);
        pi_html_text(out, list[i]->name);
        fputs("</td><td>", out);
        pi_html_text(out, list[i]->detail);
        fprintf(out, "</td><td>%" PRIu64 "</td><td>%s</td>", list[i]->durations.count,
                pi_format_ns((double)list[i]->durations.sum));
        for (int q = 0; q < PI_QUANTILE_COUNT; q++)
            fprintf(out, "<td>%s</td>",
                    pi_format_ns(pi_histogram_quantile(&list[i]->durations, pi_quantiles[q])));
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

/* The files that took the most time in opens, reads and writes; paths are the application's. */
static void files_table(FILE *out, const struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(&a->files, NULL, &n);
    fputs("<h2>Busiest files</h2>\n", out);
    if (!list || !n) {
        fputs("<p id=\"files-none\">no file I/O recorded</p>\n", out);
        free(list);
        return;
    }
    fputs("<table id=\"files\"><tr><th>path</th><th>opens</th><th>bytes</th><th>total</th>"
          "<th>p50</th><th>p99</th></tr>\n", out);
    for (size_t i = 0; i < n && i < HTML_FILES; i++) {
        struct pi_latency_entry *e = list[i];
        fputs("<tr><td>", out);
        pi_html_text(out, e->name);
        fprintf(out, "</td><td>%" PRIu64 "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                e->opens, pi_format_bytes((double)e->bytes), pi_format_ns((double)e->durations.sum),
                pi_format_ns(pi_histogram_quantile(&e->durations, 0.5)),
                pi_format_ns(pi_histogram_quantile(&e->durations, 0.99)));
    }
    fputs("</table>\n", out);
    if (n > HTML_FILES)
        fprintf(out, "<p>and %zu more files</p>\n", n - HTML_FILES);
    free(list);
}

void pi_report_latency_histograms_html(FILE *out, const struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(&a->calls, NULL, &n);
    for (size_t i = 0; list && i < n && i < HTML_HISTOGRAMS; i++)
        histogram_plot(out, list[i], (int)i);
    free(list);
}

void pi_report_latency_html(FILE *out, const struct pi_analysis *a)
{
    size_t n;
    struct pi_latency_entry **list = pi_latency_sorted(&a->calls, NULL, &n);
    if (list)
        latency_table(out, list, n);
    free(list);
    files_table(out, a);
}
