/* section_phases.c - the phases of the processes' lives in the reports (see section_phases.h). */
#include "section_phases.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "analysis/host/spans.h"
#include "analysis/sites/phases.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"

#define TEXT_PROCESSES 3
#define TEXT_COMPILATIONS 5
#define SHOWN_MIN_NS 500000000ull /* a process with less sampled Python time is left out */
#define SVG_WIDTH 1000

static int by_sampled(const void *a, const void *b)
{
    const struct pi_process_info *x = *(const struct pi_process_info *const *)a;
    const struct pi_process_info *y = *(const struct pi_process_info *const *)b;
    return x->phases->sampled_ns < y->phases->sampled_ns   ? 1
           : x->phases->sampled_ns > y->phases->sampled_ns ? -1
                                                           : 0;
}

/* Whether @ph has more than one phase, or compiled: a DataLoader worker only runs. */
static int has_phases(const struct pi_phases *ph)
{
    int phases = 0;
    for (int k = 0; k < PI_PHASE_COUNT; k++)
        phases += ph->ns[k] != 0;
    return phases > 1 || ph->compilation_count;
}

/* The processes whose phases are shown, most sampled time first, into a new array. */
static size_t shown(const struct pi_analysis *a, const struct pi_process_info ***out)
{
    *out = calloc(a->process_count ? a->process_count : 1, sizeof(**out));
    size_t n = 0;
    for (size_t i = 0; *out && i < a->process_count; i++) {
        const struct pi_phases *ph = a->processes[i].phases;
        if (ph && (ph->sampled_ns >= SHOWN_MIN_NS || ph->compilation_count) && has_phases(ph))
            (*out)[n++] = &a->processes[i];
    }
    if (n > 1)
        qsort(*out, n, sizeof(**out), by_sampled);
    return n;
}

static size_t recompilations(const struct pi_phases *ph)
{
    size_t n = 0;
    for (size_t k = 0; k < ph->compilation_count; k++)
        n += ph->compilations[k].again != 0;
    return n;
}

/* Why torch.compile compiled a frame again, in dynamo's words (the compilations' spans'
 * notes, analysis/host/spans.h): when, the frame, the reason. */
static void recompile_reasons_text(FILE *out, const struct pi_analysis *a,
                                   const struct pi_process_info *p)
{
    const struct pi_spans *s = p->spans;
    size_t shown = 0;
    for (size_t i = 0; s && i < s->note_count; i++) {
        const struct pi_span_note *n = &s->notes[i];
        if (n->kind != PI_SPAN_COMPILE)
            continue;
        if (!shown++)
            fprintf(out, "  compiled again, as dynamo says why:\n");
        if (shown > TEXT_COMPILATIONS)
            continue;
        fprintf(out, "    at %7.2f s  %s: %s\n",
                n->start_ns > a->base_ns ? (double)(n->start_ns - a->base_ns) / 1e9 : 0.0,
                n->name ? n->name : "?", n->text ? n->text : "?");
    }
    if (shown > TEXT_COMPILATIONS)
        fprintf(out, "    %zu more (all in the JSON report)\n", shown - TEXT_COMPILATIONS);
}

static void recompile_reasons_json(cJSON *o, const struct pi_analysis *a,
                                   const struct pi_process_info *p)
{
    cJSON *list = cJSON_AddArrayToObject(o, "recompile_reasons");
    const struct pi_spans *s = p->spans;
    for (size_t i = 0; s && i < s->note_count; i++) {
        const struct pi_span_note *n = &s->notes[i];
        if (n->kind != PI_SPAN_COMPILE)
            continue;
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "start_ns",
                                n->start_ns > a->base_ns ? (double)(n->start_ns - a->base_ns) : 0);
        cJSON_AddStringToObject(row, "frame", n->name ? n->name : "?");
        cJSON_AddStringToObject(row, "reason", n->text ? n->text : "?");
        cJSON_AddItemToArray(list, row);
    }
}

static void process_text(FILE *out, const struct pi_analysis *a, const struct pi_process_info *p)
{
    const struct pi_phases *ph = p->phases;
    fprintf(out, "\nPHASES (pid %d: %s of its main thread, by its Python samples)\n",
            p->header.pid, pi_format_ns((double)ph->sampled_ns));
    for (int k = 0; k < PI_PHASE_COUNT; k++) {
        if (!ph->ns[k])
            continue;
        uint64_t first = 0;
        for (size_t b = 0; b < ph->band_count && !first; b++)
            if (ph->bands[b].phase == (enum pi_phase)k)
                first = ph->bands[b].start_ns;
        fprintf(out, "  %-18s %9s %5.1f%%", pi_phase_name((enum pi_phase)k),
                pi_format_ns((double)ph->ns[k]), 100.0 * (double)ph->ns[k] / (double)ph->sampled_ns);
        if (first)
            fprintf(out, "  from %.2f s", (double)(first - a->base_ns) / 1e9);
        fputc('\n', out);
    }
    int by_frame = ph->compilation_count && ph->compilations[0].frame[0];
    if (ph->compilation_count)
        fprintf(out, "  %zu compilation%s (torch.compile), %zu of them again %s:\n",
                ph->compilation_count, ph->compilation_count == 1 ? "" : "s", recompilations(ph),
                by_frame ? "of a frame compiled before" : "at a line compiled before");
    for (size_t k = 0; k < ph->compilation_count && k < TEXT_COMPILATIONS; k++) {
        const struct pi_compilation *c = &ph->compilations[k];
        fprintf(out, "    at %7.2f s  %9s  %s%s%s%s\n", (double)(c->start_ns - a->base_ns) / 1e9,
                pi_format_ns((double)(c->end_ns - c->start_ns)), c->frame[0] ? c->frame : c->line,
                c->frame[0] && c->line[0] ? ", from " : "", c->frame[0] ? c->line : "",
                c->again ? " (again)" : "");
    }
    recompile_reasons_text(out, a, p);
}

void pi_report_phases_text(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info **list;
    size_t n = shown(a, &list);
    for (size_t i = 0; i < n && i < TEXT_PROCESSES; i++)
        process_text(out, a, list[i]);
    free(list);
}

void pi_report_phases_json(cJSON *root, const struct pi_analysis *a)
{
    cJSON *list = cJSON_AddArrayToObject(root, "phases");
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_phases *ph = a->processes[i].phases;
        if (!ph || !ph->sampled_ns)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pid", a->processes[i].header.pid);
        cJSON_AddNumberToObject(o, "sampled_ns", (double)ph->sampled_ns);
        cJSON *totals = cJSON_AddObjectToObject(o, "ns");
        for (int k = 0; k < PI_PHASE_COUNT; k++)
            if (ph->ns[k])
                cJSON_AddNumberToObject(totals, pi_phase_name((enum pi_phase)k), (double)ph->ns[k]);
        cJSON *bands = cJSON_AddArrayToObject(o, "bands");
        for (size_t b = 0; b < ph->band_count; b++) {
            cJSON *band = cJSON_CreateObject();
            cJSON_AddStringToObject(band, "phase", pi_phase_name(ph->bands[b].phase));
            cJSON_AddNumberToObject(band, "start_ns", (double)ph->bands[b].start_ns);
            cJSON_AddNumberToObject(band, "end_ns", (double)ph->bands[b].end_ns);
            cJSON_AddItemToArray(bands, band);
        }
        cJSON_AddBoolToObject(o, "bands_cut", ph->bands_cut);
        recompile_reasons_json(o, a, &a->processes[i]);
        cJSON *compilations = cJSON_AddArrayToObject(o, "compilations");
        for (size_t k = 0; k < ph->compilation_count; k++) {
            const struct pi_compilation *c = &ph->compilations[k];
            cJSON *row = cJSON_CreateObject();
            cJSON_AddNumberToObject(row, "start_ns", (double)c->start_ns);
            cJSON_AddNumberToObject(row, "end_ns", (double)c->end_ns);
            cJSON_AddNumberToObject(row, "compiling_ns", (double)c->compiling_ns);
            cJSON_AddStringToObject(row, "line", c->line);
            cJSON_AddStringToObject(row, "frame", c->frame); /* "": sampled only */
            cJSON_AddBoolToObject(row, "again", c->again);
            cJSON_AddItemToArray(compilations, row);
        }
        cJSON_AddItemToArray(list, o);
    }
}

static const char *phase_colour(enum pi_phase phase)
{
    static const char *const colours[PI_PHASE_COUNT] = {
        [PI_PHASE_STARTUP] = "#bbbbbb",   [PI_PHASE_IMPORTS] = "#9e9e9e",
        [PI_PHASE_LOADING] = "#8d6e63",   [PI_PHASE_COMPILING] = "#e53935",
        [PI_PHASE_WARMUP] = "#ffb74d",    [PI_PHASE_STEADY] = "#43a047",
        [PI_PHASE_EVALUATION] = "#1e88e5", [PI_PHASE_CHECKPOINT] = "#8e24aa",
        [PI_PHASE_SHUTDOWN] = "#757575",  [PI_PHASE_RUNNING] = "#66bb6a",
    };
    return colours[phase];
}

void pi_report_phases_html(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info **list;
    size_t n = shown(a, &list);
    if (n)
        fputs("<h2>Phases</h2>\n", out);
    double span = a->end_ns > a->base_ns ? (double)(a->end_ns - a->base_ns) : 1;
    for (size_t i = 0; i < n && i < TEXT_PROCESSES; i++) {
        const struct pi_phases *ph = list[i]->phases;
        fprintf(out, "<p>pid %d: ", list[i]->header.pid);
        for (int k = 0; k < PI_PHASE_COUNT; k++)
            if (ph->ns[k])
                fprintf(out, "<span style=\"color:%s\">&#9632;</span> %s %s &nbsp; ",
                        phase_colour((enum pi_phase)k), pi_phase_name((enum pi_phase)k),
                        pi_format_ns((double)ph->ns[k]));
        fprintf(out, "</p>\n<svg class=\"phases\" data-pid=\"%d\" width=\"%d\" height=\"24\">\n",
                list[i]->header.pid, SVG_WIDTH);
        for (size_t b = 0; b < ph->band_count; b++) {
            const struct pi_phase_band *band = &ph->bands[b];
            double x = (double)(band->start_ns - a->base_ns) / span * SVG_WIDTH;
            double w = (double)(band->end_ns - band->start_ns) / span * SVG_WIDTH;
            fprintf(out,
                    "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"20\" fill=\"%s\" "
                    "data-phase=\"%s\"><title>%s %.2f-%.2f s</title></rect>\n",
                    x, w < 0.5 ? 0.5 : w, phase_colour(band->phase), pi_phase_name(band->phase),
                    pi_phase_name(band->phase), (double)(band->start_ns - a->base_ns) / 1e9,
                    (double)(band->end_ns - a->base_ns) / 1e9);
        }
        fputs("</svg>\n", out);
    }
    free(list);
}
