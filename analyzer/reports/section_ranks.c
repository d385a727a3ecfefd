/*
 * section_ranks.c - the cross-rank part of every report: one row per rank
 * (step time, where it went, how often it was the slowest), the straggler
 * and its delay, the skew between ranks and how well their clocks agree.
 */
#include "section_ranks.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "analysis/ranks/ranks.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "reports/format/json_stream.h"

/* The text report lists this many ranks, slowest first; JSON and the export have all. */
#define TEXT_RANKS 16

struct shares {
    double compute, collective, input, gpu_wait; /* of the steady steps' time */
};

static struct shares shares_of(const struct pi_rank_summary *s)
{
    struct shares out = {0, 0, 0, 0};
    double total = (double)s->total_ns;
    if (total <= 0)
        return out;
    out.collective = (double)s->lock_total_ns / total;
    out.input = (double)s->data_ns / total;
    out.gpu_wait = (double)s->sync_ns / total;
    out.compute = 1 - out.collective - out.input - out.gpu_wait;
    if (out.compute < 0)
        out.compute = 0;
    return out;
}

static double own_per_step(const struct pi_rank_summary *s)
{
    uint64_t n = s->steps - s->warmup;
    return n ? (double)(s->total_ns - s->lock_total_ns) / (double)n : 0;
}

static const struct pi_rank_summary *sort_base;
static int slowest_first(const void *a, const void *b)
{
    double x = own_per_step(&sort_base[*(const size_t *)a]);
    double y = own_per_step(&sort_base[*(const size_t *)b]);
    return x > y ? -1 : x < y;
}

/* Indexes of the ranks, the longest own time per step first; caller frees. */
static size_t *slowest_order(const struct pi_ranks *r)
{
    size_t *order = malloc(r->count * sizeof(*order));
    if (!order)
        return NULL;
    for (size_t i = 0; i < r->count; i++)
        order[i] = i;
    sort_base = r->ranks;
    qsort(order, r->count, sizeof(*order), slowest_first);
    return order;
}

static void print_clocks(FILE *out, const struct pi_ranks *r)
{
    char line[512];
    int n;
    if (r->hosts <= 1)
        n = snprintf(line, sizeof(line), "one host: the ranks share its monotonic clock (exact)");
    else
        n = snprintf(line, sizeof(line),
                     "%d hosts put on one time line by their wall clocks; a host's moved up to %s "
                     "against its monotonic clock during the run",
                     r->hosts, pi_format_ns((double)r->clock_drift_ns));
    if (r->clock_read_ns)
        n += snprintf(line + n, sizeof(line) - (size_t)n, "; each clock sync read within %s",
                      pi_format_ns((double)r->clock_read_ns));
    struct pi_histogram *release = (struct pi_histogram *)&r->release_skew_ns;
    if (release->count)
        snprintf(line + n, sizeof(line) - (size_t)n,
                 "; one collective released the ranks within %s of each other (p50; p95 %s): "
                 "clock error and release latency together stay under that",
                 pi_format_ns(pi_histogram_quantile(release, 0.5)),
                 pi_format_ns(pi_histogram_quantile(release, 0.95)));
    pi_print_wrapped(out, "  clocks            ", line, 20, 100);
}

void pi_report_ranks_text(FILE *out, struct pi_analysis *a)
{
    struct pi_ranks *r = a->ranks;
    if (!r)
        return;
    fprintf(out, "\nRANKS (%zu ranks", r->count);
    if (r->world > 0 && (size_t)r->world != r->count)
        fprintf(out, " of a world of %ld", r->world);
    fprintf(out, " on %d host%s, %llu steady steps side by side)\n", r->hosts,
            r->hosts == 1 ? "" : "s", (unsigned long long)r->steady_steps);
    if (r->job[0])
        fprintf(out, "  job               %s\n", r->job);
    fprintf(out, "  %6s %-12s %7s %6s %9s %9s %7s %10s %6s %8s %7s\n", "rank", "host", "pid",
            "steps", "step p50", "step p95", "compute", "collective", "input", "GPU wait",
            "slowest");
    size_t *order = slowest_order(r);
    for (size_t k = 0; order && k < r->count && k < TEXT_RANKS; k++) {
        const struct pi_rank_summary *s = &r->ranks[order[k]];
        struct shares sh = shares_of(s);
        char host[13];
        fprintf(out, "  %6ld %-12s %7d %6llu %9s %9s %6.0f%% %9.0f%% %5.0f%% %7.0f%% %7llu\n",
                s->rank, pi_format_fit(s->host, 12, host, sizeof(host)), s->pid,
                (unsigned long long)s->steps,
                pi_format_ns(pi_histogram_quantile((struct pi_histogram *)&s->step_ns, 0.5)),
                pi_format_ns(pi_histogram_quantile((struct pi_histogram *)&s->step_ns, 0.95)),
                100 * sh.compute, 100 * sh.collective, 100 * sh.input, 100 * sh.gpu_wait,
                (unsigned long long)s->slowest);
    }
    if (r->count > TEXT_RANKS)
        fprintf(out, "  ... %zu more ranks (all of them in --json and --export)\n",
                r->count - TEXT_RANKS);
    free(order);
    char line[512];
    if (r->straggler >= 0) {
        const struct pi_rank_summary *s = &r->ranks[r->straggler_index];
        snprintf(line, sizeof(line),
                 "rank %ld, the slowest in %llu of %llu steps, by %s per step (median; p90 %s); "
                 "the others wait %s per step in collectives (median); its own %s time is %s "
                 "per step longer than theirs",
                 s->rank, (unsigned long long)s->slowest, (unsigned long long)r->steady_steps,
                 pi_format_ns(pi_histogram_quantile(&r->delay_ns, 0.5)),
                 pi_format_ns(pi_histogram_quantile(&r->delay_ns, 0.9)),
                 pi_format_ns(r->others_wait_ns), pi_straggler_cause_name(r->cause),
                 pi_format_ns(r->cause_ns));
        pi_print_wrapped(out, "  straggler         ", line, 20, 100);
    } else {
        snprintf(line, sizeof(line),
                 "none: no rank was the slowest in 3/4 of the steps by more than 5%% of a step; "
                 "the ranks wait %s per step in collectives (median)",
                 pi_format_ns(r->others_wait_ns));
        pi_print_wrapped(out, "  straggler         ", line, 20, 100);
    }
    struct pi_histogram *skew = &r->end_skew_ns;
    if (skew->count)
        fprintf(out, "  skew              step ends apart across ranks: p50 %s, p95 %s, max %s\n",
                pi_format_ns(pi_histogram_quantile(skew, 0.5)),
                pi_format_ns(pi_histogram_quantile(skew, 0.95)), pi_format_ns((double)skew->max));
    print_clocks(out, r);
    if (r->other_files)
        fprintf(out, "  left out          %zu processes of other jobs or repeating a rank\n",
                r->other_files);
}

static void add_quantiles(cJSON *o, const char *prefix, struct pi_histogram *h)
{
    char key[64];
    static const double qs[] = {0.5, 0.9, 0.95, 0.99};
    static const char *const names[] = {"p50", "p90", "p95", "p99"};
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "%s_%s_ns", prefix, names[i]);
        cJSON_AddNumberToObject(o, key, pi_histogram_quantile(h, qs[i]));
    }
}

/* The ranks' figures but their list, into @o. */
static void ranks_head_json(cJSON *o, struct pi_ranks *r)
{
    cJSON_AddStringToObject(o, "job", r->job);
    cJSON_AddNumberToObject(o, "world_size", (double)r->world);
    cJSON_AddNumberToObject(o, "count", (double)r->count);
    cJSON_AddNumberToObject(o, "hosts", r->hosts);
    cJSON_AddNumberToObject(o, "steady_steps", (double)r->steady_steps);
    cJSON_AddNumberToObject(o, "others_wait_per_step_ns", r->others_wait_ns);
    cJSON_AddNumberToObject(o, "left_out_processes", (double)r->other_files);
    if (r->straggler >= 0) {
        cJSON *s = cJSON_AddObjectToObject(o, "straggler");
        const struct pi_rank_summary *rs = &r->ranks[r->straggler_index];
        cJSON_AddNumberToObject(s, "rank", (double)rs->rank);
        cJSON_AddNumberToObject(s, "pid", rs->pid);
        cJSON_AddStringToObject(s, "host", rs->host);
        cJSON_AddNumberToObject(s, "slowest_steps", (double)rs->slowest);
        add_quantiles(s, "delay", &r->delay_ns);
        cJSON_AddStringToObject(s, "cause", pi_straggler_cause_name(r->cause));
        cJSON_AddNumberToObject(s, "cause_excess_per_step_ns", r->cause_ns);
    } else {
        cJSON_AddNullToObject(o, "straggler");
    }
    cJSON *skew = cJSON_AddObjectToObject(o, "skew");
    add_quantiles(skew, "step_end", &r->end_skew_ns);
    add_quantiles(skew, "collective_release", &r->release_skew_ns);
    cJSON *clock = cJSON_AddObjectToObject(o, "clocks");
    cJSON_AddBoolToObject(clock, "one_host", r->hosts <= 1);
    cJSON_AddNumberToObject(clock, "wall_clock_drift_ns", (double)r->clock_drift_ns);
    cJSON_AddNumberToObject(clock, "sync_read_ns", (double)r->clock_read_ns);
}

/* A rank's entry in the list. */
static cJSON *rank_json(const struct pi_rank_summary *s)
{
    struct shares sh = shares_of(s);
    cJSON *e = cJSON_CreateObject();
    if (!e)
        return NULL;
    cJSON_AddNumberToObject(e, "rank", (double)s->rank);
    cJSON_AddNumberToObject(e, "local_rank", (double)s->local_rank);
    cJSON_AddStringToObject(e, "host", s->host);
    cJSON_AddNumberToObject(e, "pid", s->pid);
    cJSON_AddNumberToObject(e, "steps", (double)s->steps);
    cJSON_AddNumberToObject(e, "warmup_steps", (double)s->warmup);
    add_quantiles(e, "step", (struct pi_histogram *)&s->step_ns);
    add_quantiles(e, "collective_wait", (struct pi_histogram *)&s->lock_ns);
    cJSON_AddNumberToObject(e, "compute_share", sh.compute);
    cJSON_AddNumberToObject(e, "collective_share", sh.collective);
    cJSON_AddNumberToObject(e, "input_share", sh.input);
    cJSON_AddNumberToObject(e, "gpu_wait_share", sh.gpu_wait);
    cJSON_AddNumberToObject(e, "slowest_steps", (double)s->slowest);
    return e;
}

void pi_report_ranks_json(cJSON *root, struct pi_analysis *a)
{
    struct pi_ranks *r = a->ranks;
    if (!r) {
        cJSON_AddNullToObject(root, "ranks");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(root, "ranks");
    ranks_head_json(o, r);
    cJSON *list = cJSON_AddArrayToObject(o, "list");
    for (size_t i = 0; i < r->count; i++)
        cJSON_AddItemToArray(list, rank_json(&r->ranks[i]));
}

void pi_report_ranks_json_stream(struct pi_json_stream *stream, struct pi_analysis *a)
{
    struct pi_ranks *r = a->ranks;
    if (!r) {
        cJSON *none = cJSON_CreateNull();
        pi_json_stream_value(stream, "ranks", none);
        cJSON_Delete(none);
        return;
    }
    pi_json_stream_open_object(stream, "ranks");
    cJSON *head = cJSON_CreateObject();
    if (head)
        ranks_head_json(head, r);
    pi_json_stream_members(stream, head);
    cJSON_Delete(head);
    pi_json_stream_open_array(stream, "list");
    for (size_t i = 0; i < r->count; i++) {
        cJSON *e = rank_json(&r->ranks[i]);
        pi_json_stream_value(stream, NULL, e);
        cJSON_Delete(e);
    }
    pi_json_stream_close(stream);
    pi_json_stream_close(stream);
}

void pi_report_ranks_html(FILE *out, struct pi_analysis *a)
{
    struct pi_ranks *r = a->ranks;
    if (!r)
        return;
    fprintf(out, "<h2 id=\"ranks\">Ranks</h2>\n<p>%zu ranks on %d host%s, %llu steady steps side "
                 "by side. ",
            r->count, r->hosts, r->hosts == 1 ? "" : "s", (unsigned long long)r->steady_steps);
    if (r->straggler >= 0)
        fprintf(out, "Straggler: <b>rank %ld</b>, late by %s per step (median), by its own %s "
                     "time.</p>\n",
                r->ranks[r->straggler_index].rank,
                pi_format_ns(pi_histogram_quantile(&r->delay_ns, 0.5)),
                pi_straggler_cause_name(r->cause));
    else
        fputs("No straggler.</p>\n", out);
    /* one row per rank, slowest first: a bar of its step split into its parts */
    static const char *const colours[] = {"#4878d0", "#ee854a", "#6acc64", "#d65f5f"};
    static const char *const parts[] = {"compute", "collective wait", "input", "GPU wait"};
    fputs("<p>", out);
    for (int i = 0; i < 4; i++)
        fprintf(out, "<span style=\"color:%s\">&#9632;</span> %s &nbsp;", colours[i], parts[i]);
    fputs("</p>\n<table id=\"rank-table\"><tr><th>rank</th><th>host</th><th>pid</th>"
          "<th>step p50</th><th>step p95</th><th>slowest in</th><th style=\"width:50%\">step "
          "split</th></tr>\n",
          out);
    size_t *order = slowest_order(r);
    for (size_t k = 0; order && k < r->count; k++) {
        const struct pi_rank_summary *s = &r->ranks[order[k]];
        struct shares sh = shares_of(s);
        double share[4] = {sh.compute, sh.collective, sh.input, sh.gpu_wait};
        fprintf(out, "<tr><td>%ld%s</td><td>", s->rank,
                r->straggler == s->rank ? " (straggler)" : "");
        pi_html_text(out, s->host);
        fprintf(out, "</td><td>%d</td><td>%s</td><td>%s</td><td>%llu</td><td><div "
                     "style=\"display:flex;height:12px\">",
                s->pid, pi_format_ns(pi_histogram_quantile((struct pi_histogram *)&s->step_ns, 0.5)),
                pi_format_ns(pi_histogram_quantile((struct pi_histogram *)&s->step_ns, 0.95)),
                (unsigned long long)s->slowest);
        for (int i = 0; i < 4; i++)
            fprintf(out, "<div title=\"%s %.0f%%\" style=\"width:%.1f%%;background:%s\"></div>",
                    parts[i], 100 * share[i], 100 * share[i], colours[i]);
        fputs("</div></td></tr>\n", out);
    }
    free(order);
    fputs("</table>\n", out);
}
