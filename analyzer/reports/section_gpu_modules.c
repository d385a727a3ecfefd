/* section_gpu_modules.c - GPU time by nn.Module path in the reports (see section_gpu_modules.h). */
#include "section_gpu_modules.h"

#include <cjson/cJSON.h>
#include <inttypes.h>

#include "analysis/gpu/gpu_modules.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "reports/format/html_flame.h"

/* Rows shown: those of at least this share of the GPU time, at most this many. */
#define SHOWN_SHARE 0.01
#define SHOWN_ROWS 30
/* Python lines by GPU time: in the text, and in the JSON */
#define TEXT_PATHS 5
#define JSON_PATHS 20

static double share(const struct pi_gpu_modules *m, double ns)
{
    return m->gpu_ns ? ns / (double)m->gpu_ns : 0;
}


/* "backward: 61.0% of GPU time (± 2.1), of which MmBackward0 30.2%, ..." (the three largest) */
static void backward_line(FILE *out, const struct pi_gpu_modules *m)
{
    const struct pi_gpu_module *b = pi_gpu_modules_backward(m);
    if (!b)
        return;
    fprintf(out, "  backward: %.1f%% of GPU time (±%.1f), of which", 100 * share(m, b->gpu_ns),
            b->error_points);
    int shown = 0;
    for (const struct pi_gpu_module *r = b + 1; r < m->rows + m->count && r->depth > 0; r++)
        if (shown < 3)
            fprintf(out, "%s %s %.1f%%", shown++ ? "," : "", r->name, 100 * share(m, r->gpu_ns));
    fputs(shown ? "\n" : " no node\n", out);
}

#define NOT_PLACED                                                                                 \
    "launched by threads without Python frames under no autograd node, or by kernels never "       \
    "sampled"

void pi_report_gpu_modules_text(FILE *out, const struct pi_analysis *a)
{
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) != 0 || !m.count || !m.gpu_ns) {
        pi_gpu_modules_free(&m);
        return;
    }
    fprintf(out, "\nGPU TIME BY MODULE (nn.Module forward calls above the sampled launches, "
                 "%" PRIu64 " samples; backward: autograd nodes of %" PRIu64 " samples of "
                 "threads without Python frames; share of all GPU time, 95%% sampling error)\n",
            m.samples, m.native_samples);
    fprintf(out, "  %-60s %10s %14s %10s\n", "module path", "gpu time", "share", "launches");
    size_t shown = 0;
    for (size_t i = 0; i < m.count && shown < SHOWN_ROWS; i++) {
        const struct pi_gpu_module *r = &m.rows[i];
        if (share(&m, r->gpu_ns) < SHOWN_SHARE)
            continue;
        char label[256], fitted[80];
        snprintf(label, sizeof(label), "%*s%s", (int)(2 * r->depth), "", r->name);
        fprintf(out, "  %-60s %10s %6.1f%% ±%4.1f %10.0f\n",
                pi_format_fit(label, 60, fitted, sizeof(fitted)), pi_format_ns(r->gpu_ns),
                100 * share(&m, r->gpu_ns), r->error_points, r->launches);
        shown++;
    }
    if (m.outside_ns)
        fprintf(out, "  launched outside any module's forward: %s (%.1f%%)\n",
                pi_format_ns((double)m.outside_ns), 100 * share(&m, (double)m.outside_ns));
    backward_line(out, &m);
    double unplaced = (double)pi_gpu_modules_unplaced_ns(&m);
    if (unplaced > 0)
        fprintf(out, "  not placed: %s (%.1f%%) " NOT_PLACED "\n", pi_format_ns(unplaced),
                100 * share(&m, unplaced));
    if (m.path_count)
        fputs("  lines launching the most GPU time (estimated):\n", out);
    for (size_t i = 0; i < m.path_count && i < TEXT_PATHS; i++)
        fprintf(out, "    %6.1f%% %10s  %s\n", 100 * share(&m, m.paths[i].gpu_ns),
                pi_format_ns(m.paths[i].gpu_ns), m.paths[i].headline);
    pi_gpu_modules_free(&m);
}

void pi_report_gpu_modules_json(cJSON *root, const struct pi_analysis *a)
{
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) != 0 || !(m.samples + m.native_samples)) {
        pi_gpu_modules_free(&m);
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(root, "gpu_modules");
    cJSON_AddNumberToObject(o, "gpu_ns", (double)m.gpu_ns);
    cJSON_AddNumberToObject(o, "samples", (double)m.samples);
    cJSON_AddNumberToObject(o, "outside_ns", (double)m.outside_ns);
    cJSON_AddNumberToObject(o, "unplaced_ns", (double)pi_gpu_modules_unplaced_ns(&m));
    const struct pi_gpu_module *b = pi_gpu_modules_backward(&m);
    cJSON_AddNumberToObject(o, "native_samples", (double)m.native_samples);
    cJSON_AddNumberToObject(o, "backward_ns", b ? b->gpu_ns : 0);
    cJSON_AddNumberToObject(o, "backward_share", b ? share(&m, b->gpu_ns) : 0);
    cJSON_AddNumberToObject(o, "backward_error_points", b ? b->error_points : 0);
    cJSON_AddNumberToObject(o, "backward_samples", b ? (double)b->samples : 0);
    cJSON *paths = cJSON_AddArrayToObject(o, "lines");
    for (size_t i = 0; i < m.path_count && i < JSON_PATHS; i++) {
        cJSON *line = cJSON_CreateObject();
        cJSON_AddStringToObject(line, "headline", m.paths[i].headline);
        cJSON_AddNumberToObject(line, "gpu_ns", m.paths[i].gpu_ns);
        cJSON_AddNumberToObject(line, "share", share(&m, m.paths[i].gpu_ns));
        cJSON_AddItemToArray(paths, line);
    }
    cJSON *rows = cJSON_AddArrayToObject(o, "modules");
    cJSON *nodes = cJSON_AddArrayToObject(o, "backward_nodes");
    for (size_t i = 0; i < m.count; i++) {
        const struct pi_gpu_module *r = &m.rows[i];
        if (r->backward && r->depth == 0)
            continue;
        cJSON *row = cJSON_CreateObject();
        if (r->backward) {
            cJSON_AddStringToObject(row, "node", r->name);
        } else {
            cJSON_AddStringToObject(row, "path", r->path);
            cJSON_AddStringToObject(row, "module", r->name);
            cJSON_AddNumberToObject(row, "depth", r->depth);
        }
        cJSON_AddNumberToObject(row, "gpu_ns", r->gpu_ns);
        cJSON_AddNumberToObject(row, "share", share(&m, r->gpu_ns));
        cJSON_AddNumberToObject(row, "error_points", r->error_points);
        cJSON_AddNumberToObject(row, "launches", r->launches);
        cJSON_AddNumberToObject(row, "samples", (double)r->samples);
        cJSON_AddItemToArray(r->backward ? nodes : rows, row);
    }
    pi_gpu_modules_free(&m);
}

void pi_report_gpu_modules_html(FILE *out, const struct pi_analysis *a)
{
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) != 0 || !m.count || !m.gpu_ns) {
        pi_gpu_modules_free(&m);
        return;
    }
    fprintf(out, "<h2>GPU time by module</h2>\n<p>nn.Module forward calls above the %" PRIu64
                 " sampled launches; the backward pass by autograd node; shares of all GPU "
                 "time with their 95%% sampling error</p>\n"
                 "<table><tr><th>module path</th><th>GPU time</th><th>share</th><th>launches"
                 "</th></tr>\n",
            m.samples);
    size_t shown = 0;
    for (size_t i = 0; i < m.count && shown < SHOWN_ROWS; i++) {
        const struct pi_gpu_module *r = &m.rows[i];
        if (share(&m, r->gpu_ns) < SHOWN_SHARE)
            continue;
        fprintf(out, "<tr><td style=\"text-align:left;padding-left:%uem\" title=\"", 1 + r->depth);
        pi_html_text(out, r->path);
        fputs("\">", out);
        pi_html_text(out, r->name);
        fprintf(out, "</td><td>%s</td><td>%.1f%% ± %.1f</td><td>%.0f</td></tr>\n",
                pi_format_ns(r->gpu_ns), 100 * share(&m, r->gpu_ns), r->error_points,
                r->launches);
        shown++;
    }
    fputs("</table>\n", out);
    double unplaced = (double)pi_gpu_modules_unplaced_ns(&m);
    if (unplaced > 0)
        fprintf(out, "<p>Not placed: %s (%.1f%%), " NOT_PLACED "</p>\n", pi_format_ns(unplaced),
                100 * share(&m, unplaced));
    pi_gpu_modules_free(&m);
}

void pi_report_gpu_modules_flame(FILE *out, const struct pi_analysis *a)
{
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) == 0 && m.tree.count && m.tree.nodes[0].weight) {
        char title[200];
        snprintf(title, sizeof(title), "GPU time by Python call path (%s, estimated from %" PRIu64
                 " sampled launches; the backward pass by autograd node; kernels last)",
                 pi_format_ns((double)m.tree.nodes[0].weight), m.samples + m.native_samples);
        pi_html_flame(out, "flame-gpu", title, &m.tree, 0);
    }
    pi_gpu_modules_free(&m);
}
