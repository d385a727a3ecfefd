/*
 * section_gemm.c - matrix products in the reports (see section_gemm.h).
 * Achieved TFLOP/s are FLOPs over the GPU time of the kernels the calls
 * launched; a call whose kernels' times never came counts its FLOPs all
 * the same, so the figure is a bound from above only where that happened
 * (said as untimed kernels).
 */
#include "section_gemm.h"

#include <cjson/cJSON.h>
#include <inttypes.h>

#include "analysis/gpu/gpu_modules.h"
#include "gemm_summary.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"

#define SHOWN_SHAPES 15
#define SHOWN_MODULES 20

/* @flops in words: "12.3 TFLOP", "512 MFLOP" */
static const char *flops_text(double flops)
{
    static char text[4][32];
    static int next;
    char *t = text[next++ % 4];
    const char *units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
    int u = 0;
    while (flops >= 1000 && u < 6)
        flops /= 1000, u++;
    snprintf(t, 32, "%.*f %s", flops < 10 && u ? 2 : flops < 100 && u ? 1 : 0, flops, units[u]);
    return t;
}

/* TFLOP/s to three figures below 10, to one decimal above */
static const char *rate_text(double tflops_per_s)
{
    static char text[4][32];
    static int next;
    char *t = text[next++ % 4];
    if (tflops_per_s >= 10 || tflops_per_s == 0)
        snprintf(t, 32, "%.1f", tflops_per_s);
    else
        snprintf(t, 32, "%.3g", tflops_per_s);
    return t;
}

/* "[m×k]·[k×n]", "×batch" after it when batched */
static const char *shape_text(const struct pi_gemm_shape *x)
{
    static char text[4][96];
    static int next;
    char *t = text[next++ % 4];
    int n = snprintf(t, 96, "[%" PRIu32 "×%" PRIu32 "]·[%" PRIu32 "×%" PRIu32 "]", x->m, x->k,
                     x->k, x->n);
    if (x->batch != 1 && n > 0 && n < 96)
        snprintf(t + n, 96 - (size_t)n, " ×%" PRIu32, x->batch);
    return t;
}

/* @text padded with spaces to @width characters (×, · take two bytes each, one column) */
static void padded(FILE *out, const char *text, int width)
{
    int columns = 0;
    for (const char *c = text; *c; c++)
        columns += ((unsigned char)*c & 0xc0) != 0x80;
    fprintf(out, "%s%*s", text, width > columns ? width - columns : 0, "");
}

static const char *device_name(const struct pi_device_info *d)
{
    return d && d->name[0] ? d->name : "this device";
}

/* The device's name, escaped for the page when @html: it comes from the trace. */
static void name_of(FILE *out, const struct pi_device_info *d, int html)
{
    if (html)
        pi_html_text(out, device_name(d));
    else
        fputs(device_name(d), out);
}

/* "42% of this NVIDIA H200's 989 TFLOP/s bf16 (datasheet)" or why no share */
static void peak_words(FILE *out, const struct pi_gemm_summary *s, int html)
{
    if (!s->device) {
        fputs("peak unknown: no device record in the trace", out);
        return;
    }
    if (!s->has_peak) {
        fputs("peak unknown for ", out);
        name_of(out, s->device, html);
        fprintf(out, " (sm_%u%u, %u SMs) in %s: not in the table", s->device->major,
                s->device->minor, s->device->sms, s->dtype);
        return;
    }
    fprintf(out, "%.3g%% of this ",
            100 * pi_tflops_per_s(s->dtype_flops, s->dtype_gpu_ns) / s->peak.tflops_per_s);
    name_of(out, s->device, html);
    fprintf(out, "'s %.1f TFLOP/s %s (%s%s%s)", s->peak.tflops_per_s, s->dtype, s->peak.source,
            s->peak.product ? ": " : "", s->peak.product ? s->peak.product : "");
}

static void text_modules(FILE *out, const struct pi_analysis *a)
{
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) != 0) {
        pi_gpu_modules_free(&m);
        return;
    }
    size_t shown = 0;
    for (size_t i = 0; i < m.count && shown < SHOWN_MODULES; i++) {
        const struct pi_gpu_module *r = &m.rows[i];
        if (r->gemm_flops <= 0)
            continue;
        if (shown++ == 0)
            fprintf(out, "  by module (estimated from sampled launches):\n    %-56s %12s %12s\n",
                    "module path", "FLOPs", "TFLOP/s");
        fprintf(out, "    %*s%-*s %12s %12s\n", 2 * (int)r->depth, "",
                56 - 2 * (int)r->depth, r->name, flops_text(r->gemm_flops),
                rate_text(pi_tflops_per_s(r->gemm_flops, (uint64_t)r->gemm_gpu_ns)));
    }
    pi_gpu_modules_free(&m);
}

void pi_report_gemm_text(FILE *out, const struct pi_analysis *a)
{
    struct pi_gemm_summary s;
    if (pi_gemm_summarise(a, &s) != 1)
        return;
    fprintf(out, "\nGEMMS (cuBLAS, cuBLASLt)\n  %" PRIu64 " calls%s, %s in %s of their %" PRIu64
                 " kernels: %s TFLOP/s\n",
            s.calls, s.failed ? " (and failed ones)" : "", flops_text(s.flops),
            pi_format_ns((double)s.gpu_ns), s.kernels, rate_text(pi_tflops_per_s(s.flops, s.gpu_ns)));
    if (s.untimed_kernels)
        fprintf(out, "  %" PRIu64 " kernels without GPU time: TFLOP/s are upper bounds\n",
                s.untimed_kernels);
    if (s.dtype) {
        fprintf(out, "  GEMMs: %s TFLOP/s %s, ",
                rate_text(pi_tflops_per_s(s.dtype_flops, s.dtype_gpu_ns)), s.dtype);
        peak_words(out, &s, 0);
        fputc('\n', out);
    }
    if (s.steady_steps) {
        fprintf(out, "  per steady step: %s", flops_text(s.flops_per_step));
        if (s.mfu >= 0)
            fprintf(out, "; model FLOPs utilisation >= %.3g%% (GEMMs only; attention kernels: "
                         "GPU time, no FLOPs)",
                    100 * s.mfu);
        else
            fputs("; model FLOPs utilisation unknown: no peak for this device", out);
        fputc('\n', out);
    }
    fputs("  ", out);
    padded(out, "shape [m×k]·[k×n]", 34);
    fprintf(out, " %-6s %8s %8s %12s %12s %10s\n", "type", "calls", "kernels", "FLOPs", "GPU",
            "TFLOP/s");
    for (size_t i = 0; i < s.shape_count && i < SHOWN_SHAPES; i++) {
        const struct pi_gemm_shape *x = &s.shapes[i];
        fputs("  ", out);
        padded(out, shape_text(x), 34);
        fprintf(out, " %-6s %8" PRIu64 " %8" PRIu64 " %12s %12s %10s\n", x->dtype, x->calls, x->kernels, flops_text((double)x->flops),
                pi_format_ns((double)x->gpu_ns),
                rate_text(pi_tflops_per_s((double)x->flops, x->gpu_ns)));
    }
    if (s.shape_count > SHOWN_SHAPES)
        fprintf(out, "  ... %zu more shapes (--json, --export)\n", s.shape_count - SHOWN_SHAPES);
    text_modules(out, a);
    pi_gemm_summary_free(&s);
}

static void json_peak(cJSON *o, const struct pi_gemm_summary *s)
{
    if (!s->has_peak) {
        cJSON_AddNullToObject(o, "peak");
        return;
    }
    cJSON *peak = cJSON_AddObjectToObject(o, "peak");
    cJSON_AddStringToObject(peak, "device", device_name(s->device));
    cJSON_AddStringToObject(peak, "dtype", s->dtype);
    cJSON_AddNumberToObject(peak, "tflops_per_s", s->peak.tflops_per_s);
    cJSON_AddStringToObject(peak, "source", s->peak.source);
    cJSON_AddNumberToObject(peak, "sms", s->device->sms);
    cJSON_AddNumberToObject(peak, "clock_khz", s->device->clock_khz);
    char cc[16];
    snprintf(cc, sizeof(cc), "%u.%u", s->device->major, s->device->minor);
    cJSON_AddStringToObject(peak, "compute_capability", cc);
}

static void json_modules(cJSON *o, const struct pi_analysis *a)
{
    cJSON *list = cJSON_AddArrayToObject(o, "modules");
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) == 0)
        for (size_t i = 0; i < m.count; i++) {
            if (m.rows[i].gemm_flops <= 0)
                continue;
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "path", m.rows[i].path);
            cJSON_AddNumberToObject(r, "flops", m.rows[i].gemm_flops);
            cJSON_AddNumberToObject(r, "gpu_ns", m.rows[i].gemm_gpu_ns);
            cJSON_AddItemToArray(list, r);
        }
    pi_gpu_modules_free(&m);
}

void pi_report_gemm_json(cJSON *root, const struct pi_analysis *a)
{
    struct pi_gemm_summary s;
    if (pi_gemm_summarise(a, &s) != 1) {
        cJSON_AddNullToObject(root, "gemm");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(root, "gemm");
    cJSON_AddNumberToObject(o, "calls", (double)s.calls);
    cJSON_AddNumberToObject(o, "failed", (double)s.failed);
    cJSON_AddNumberToObject(o, "kernels", (double)s.kernels);
    cJSON_AddNumberToObject(o, "untimed_kernels", (double)s.untimed_kernels);
    cJSON_AddNumberToObject(o, "flops", s.flops);
    cJSON_AddNumberToObject(o, "gpu_ns", (double)s.gpu_ns);
    cJSON_AddNumberToObject(o, "tflops_per_s", pi_tflops_per_s(s.flops, s.gpu_ns));
    if (s.dtype) {
        cJSON_AddStringToObject(o, "dtype", s.dtype);
        cJSON_AddNumberToObject(o, "dtype_tflops_per_s",
                                pi_tflops_per_s(s.dtype_flops, s.dtype_gpu_ns));
    }
    if (s.steady_steps) {
        cJSON_AddNumberToObject(o, "flops_per_step", s.flops_per_step);
        cJSON_AddNumberToObject(o, "steady_steps", (double)s.steady_steps);
    } else {
        cJSON_AddNullToObject(o, "flops_per_step");
    }
    json_peak(o, &s);
    if (s.has_peak && s.dtype_gpu_ns)
        cJSON_AddNumberToObject(o, "peak_share", pi_tflops_per_s(s.dtype_flops, s.dtype_gpu_ns) /
                                                     s.peak.tflops_per_s);
    else
        cJSON_AddNullToObject(o, "peak_share");
    if (s.mfu >= 0)
        cJSON_AddNumberToObject(o, "mfu", s.mfu);
    else
        cJSON_AddNullToObject(o, "mfu");
    cJSON *shapes = cJSON_AddArrayToObject(o, "shapes");
    for (size_t i = 0; i < s.shape_count; i++) {
        const struct pi_gemm_shape *x = &s.shapes[i];
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "m", x->m);
        cJSON_AddNumberToObject(r, "n", x->n);
        cJSON_AddNumberToObject(r, "k", x->k);
        cJSON_AddNumberToObject(r, "batch", x->batch);
        cJSON_AddStringToObject(r, "dtype", x->dtype);
        cJSON_AddNumberToObject(r, "calls", (double)x->calls);
        cJSON_AddNumberToObject(r, "kernels", (double)x->kernels);
        cJSON_AddNumberToObject(r, "flops", (double)x->flops);
        cJSON_AddNumberToObject(r, "gpu_ns", (double)x->gpu_ns);
        cJSON_AddNumberToObject(r, "tflops_per_s", pi_tflops_per_s((double)x->flops, x->gpu_ns));
        cJSON_AddItemToArray(shapes, r);
    }
    json_modules(o, a);
    pi_gemm_summary_free(&s);
}

void pi_report_gemm_html(FILE *out, const struct pi_analysis *a)
{
    struct pi_gemm_summary s;
    if (pi_gemm_summarise(a, &s) != 1)
        return;
    fprintf(out, "<h2>GEMMs (cuBLAS, cuBLASLt)</h2>\n<p>%" PRIu64 " calls, %s in %s of kernels: "
                 "%s TFLOP/s. ",
            s.calls, flops_text(s.flops), pi_format_ns((double)s.gpu_ns),
            rate_text(pi_tflops_per_s(s.flops, s.gpu_ns)));
    if (s.dtype) {
        fprintf(out, "GEMMs: %s TFLOP/s %s, ",
                rate_text(pi_tflops_per_s(s.dtype_flops, s.dtype_gpu_ns)), s.dtype);
        peak_words(out, &s, 1);
        fputs(". ", out);
    }
    if (s.steady_steps)
        fprintf(out, "Per steady step %s; model FLOPs utilisation %s%.3g%% (GEMMs only).",
                flops_text(s.flops_per_step), s.mfu >= 0 ? "&ge; " : "unknown",
                s.mfu >= 0 ? 100 * s.mfu : 0.0);
    fputs("</p>\n<table class=\"gemm\"><tr><th>shape [m&times;k]&middot;[k&times;n]</th>"
          "<th>type</th><th>calls</th><th>kernels</th><th>FLOPs</th><th>GPU</th>"
          "<th>TFLOP/s</th></tr>\n", out);
    for (size_t i = 0; i < s.shape_count && i < 4 * SHOWN_SHAPES; i++) {
        const struct pi_gemm_shape *x = &s.shapes[i];
        fputs("<tr><td>", out);
        pi_html_text(out, shape_text(x));
        fprintf(out, "</td><td>%s</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%s</td>"
                     "<td>%s</td><td>%s</td></tr>\n",
                x->dtype, x->calls, x->kernels, flops_text((double)x->flops),
                pi_format_ns((double)x->gpu_ns),
                rate_text(pi_tflops_per_s((double)x->flops, x->gpu_ns)));
    }
    fputs("</table>\n", out);
    pi_gemm_summary_free(&s);
}
