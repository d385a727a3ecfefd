/* section_gpu_modules.c - GPU time by nn.Module path in the reports (see section_gpu_modules.h). */
#include "section_gpu_modules.h"

#include <cjson/cJSON.h>
#include <inttypes.h>

#include "analysis/gpu/gpu_modules.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"

/* Rows shown: those of at least this share of the GPU time, at most this many. */
#define SHOWN_SHARE 0.01
#define SHOWN_ROWS 30

static double share(const struct pi_gpu_modules *m, double ns)
{
    return m->gpu_ns ? ns / (double)m->gpu_ns : 0;
}

/* What no module can hold: launches by threads without Python frames, kernels never sampled. */
static uint64_t unplaced_ns(const struct pi_gpu_modules *m)
{
    return m->gpu_ns > m->placed_ns ? m->gpu_ns - m->placed_ns : 0;
}

void pi_report_gpu_modules_text(FILE *out, const struct pi_analysis *a)
{
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) != 0 || !m.count || !m.gpu_ns) {
        pi_gpu_modules_free(&m);
        return;
    }
    fprintf(out, "\nGPU TIME BY MODULE (nn.Module forward calls above the sampled launches, "
                 "%" PRIu64 " samples; share of all GPU time, 95%% sampling error)\n",
            m.samples);
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
    if (unplaced_ns(&m))
        fprintf(out, "  not placed: %s (%.1f%%) launched by threads without Python frames (the "
                     "backward pass, which autograd's threads launch) or by kernels never "
                     "sampled\n",
                pi_format_ns((double)unplaced_ns(&m)), 100 * share(&m, (double)unplaced_ns(&m)));
    pi_gpu_modules_free(&m);
}

void pi_report_gpu_modules_json(cJSON *root, const struct pi_analysis *a)
{
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) != 0 || !m.samples) {
        pi_gpu_modules_free(&m);
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(root, "gpu_modules");
    cJSON_AddNumberToObject(o, "gpu_ns", (double)m.gpu_ns);
    cJSON_AddNumberToObject(o, "samples", (double)m.samples);
    cJSON_AddNumberToObject(o, "outside_ns", (double)m.outside_ns);
    cJSON_AddNumberToObject(o, "unplaced_ns", (double)unplaced_ns(&m));
    cJSON *rows = cJSON_AddArrayToObject(o, "modules");
    for (size_t i = 0; i < m.count; i++) {
        const struct pi_gpu_module *r = &m.rows[i];
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "path", r->path);
        cJSON_AddStringToObject(row, "module", r->name);
        cJSON_AddNumberToObject(row, "depth", r->depth);
        cJSON_AddNumberToObject(row, "gpu_ns", r->gpu_ns);
        cJSON_AddNumberToObject(row, "share", share(&m, r->gpu_ns));
        cJSON_AddNumberToObject(row, "error_points", r->error_points);
        cJSON_AddNumberToObject(row, "launches", r->launches);
        cJSON_AddNumberToObject(row, "samples", (double)r->samples);
        cJSON_AddItemToArray(rows, row);
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
                 " sampled launches; shares of all GPU time with their 95%% sampling error</p>\n"
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
    if (unplaced_ns(&m))
        fprintf(out, "<p>Not placed: %s (%.1f%%), launched by threads without Python frames "
                     "(the backward pass, which autograd's threads launch) or by kernels never "
                     "sampled</p>\n",
                pi_format_ns((double)unplaced_ns(&m)), 100 * share(&m, (double)unplaced_ns(&m)));
    pi_gpu_modules_free(&m);
}
