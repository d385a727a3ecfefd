/* section_summary_mode.c - summaries and detail windows in the reports (section_summary_mode.h). */
#include "section_summary_mode.h"

#include <cjson/cJSON.h>
#include <inttypes.h>

static const char *reason_name(unsigned reason)
{
    return reason == PI_DETAIL_SLOW_STEP   ? "slow step"
           : reason == PI_DETAIL_REQUESTED ? "requested"
                                           : "unknown";
}

/* @ns from @origin, 0 for a time before it (a damaged file) */
static uint64_t since(uint64_t ns, uint64_t origin)
{
    return ns > origin ? ns - origin : 0;
}

static int summarised(const struct pi_process_info *p)
{
    return p->summary.summaries || p->summary.window_count;
}

/* What all processes recorded in summary mode hold together. */
struct totals {
    size_t processes, windows;
    uint64_t summarised, summaries;
};

static struct totals add_up(const struct pi_analysis *a)
{
    struct totals t = {0, 0, 0, 0};
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (!summarised(p))
            continue;
        t.processes++;
        t.windows += p->summary.window_count;
        t.summarised += p->summary.summarised;
        t.summaries += p->summary.summaries;
    }
    return t;
}

/* Windows beyond this many are counted, not listed: a job of many ranks has many. */
#define WINDOWS_LISTED 20

/* One section for the whole job, whatever its number of processes; the windows by process. */
void pi_report_summary_mode_text(FILE *out, const struct pi_analysis *a)
{
    struct totals t = add_up(a);
    if (!t.processes)
        return;
    fprintf(out, "\nSUMMARY MODE: %zu process%s recorded in summary mode; %" PRIu64
            " launches, copies, GPU times, file I/O and waits counted in %" PRIu64
            " summaries (their percentiles from histograms, within 0.8%%); the rest, and %zu "
            "detail window%s, in full\n",
            t.processes, t.processes == 1 ? "" : "es", t.summarised, t.summaries, t.windows,
            t.windows == 1 ? "" : "s");
    size_t listed = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        const struct pi_summary_info *s = &p->summary;
        uint64_t origin = p->header.start_monotonic_ns;
        for (size_t w = 0; w < s->window_count && listed < WINDOWS_LISTED; w++, listed++) {
            const struct pi_detail_window *d = &s->windows[w];
            fprintf(out, "  pid %d, %.3f s to %.3f s after its start: %s", p->header.pid,
                    (double)since(d->start_ns, origin) / 1e9,
                    (double)since(d->end_ns, origin) / 1e9, reason_name(d->reason));
            if (d->reason == PI_DETAIL_SLOW_STEP)
                fprintf(out, " of %.1f ms", (double)d->step_ns / 1e6);
            fputc('\n', out);
        }
    }
    if (t.windows > listed)
        fprintf(out, "  ... %zu more windows (JSON: summary_mode of each process)\n",
                t.windows - listed);
}

void pi_report_summary_mode_json(struct cJSON *o, const struct pi_process_info *p)
{
    const struct pi_summary_info *s = &p->summary;
    if (!summarised(p))
        return;
    cJSON *mode = cJSON_AddObjectToObject(o, "summary_mode");
    cJSON_AddNumberToObject(mode, "summaries", (double)s->summaries);
    cJSON_AddNumberToObject(mode, "records_summarised", (double)s->summarised);
    cJSON_AddNumberToObject(mode, "records_replayed", (double)s->replayed);
    cJSON *windows = cJSON_AddArrayToObject(mode, "detail_windows");
    uint64_t origin = p->header.start_monotonic_ns;
    for (size_t i = 0; i < s->window_count; i++) {
        const struct pi_detail_window *d = &s->windows[i];
        cJSON *w = cJSON_CreateObject();
        cJSON_AddNumberToObject(w, "start_ns", (double)since(d->start_ns, origin));
        cJSON_AddNumberToObject(w, "end_ns", (double)since(d->end_ns, origin));
        cJSON_AddStringToObject(w, "reason", reason_name(d->reason));
        cJSON_AddNumberToObject(w, "step_ns", (double)d->step_ns);
        cJSON_AddItemToArray(windows, w);
    }
}

void pi_report_summary_mode_html(FILE *out, const struct pi_analysis *a)
{
    struct totals t = add_up(a);
    if (!t.processes)
        return;
    fprintf(out, "<p>%zu process%s recorded in summary mode: %" PRIu64 " records counted in %"
            PRIu64 " summaries (percentiles from their histograms, within 0.8%%), %zu "
            "window%s of full detail.</p>\n", t.processes, t.processes == 1 ? " was" : "es were",
            t.summarised, t.summaries, t.windows, t.windows == 1 ? "" : "s");
}
