/*
 * section_requests.c - the requests a serving process answered
 * (analysis/host/requests.h) in every report: how many, how fast, their
 * latency, what their time was made of (tokenizing, the model, decoding and
 * post-processing, and the waits inside them), generate()'s time to first
 * token and per output token, and the slowest requests with the part that
 * made each slow next to the median request. The text shows the subject
 * first, then up to three more serving processes; JSON has each one's.
 */
#include "section_requests.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/host/requests.h"
#include "analysis/host/spans.h"
#include "analysis/pass/training_process.h"
#include "reports/format/call_site_format.h"
#include "reports/format/figures.h"
#include "reports/format/format.h"

#define TEXT_PROCESSES 4

_Static_assert(PI_REQUEST_QUANTILE_COUNT == PI_QUANTILE_COUNT,
               "requests keep the percentiles every latency table gives");

/* Each part in words, and in the JSON's keys. */
static const char *const part_words[PI_REQUEST_PART_COUNT] = {
    [PI_REQUEST_TOKENIZING] = "tokenizing",
    [PI_REQUEST_MODEL] = "the model",
    [PI_REQUEST_OTHER] = "decoding and post-processing",
    [PI_REQUEST_WAITING] = "waiting in recorded calls",
    [PI_REQUEST_COLLECTING] = "garbage collection",
};
static const char *const part_keys[PI_REQUEST_PART_COUNT] = {
    [PI_REQUEST_TOKENIZING] = "tokenizing",
    [PI_REQUEST_MODEL] = "model",
    [PI_REQUEST_OTHER] = "other",
    [PI_REQUEST_WAITING] = "waiting",
    [PI_REQUEST_COLLECTING] = "collecting",
};

const char *pi_request_kind_words(const struct pi_process_info *p, char *out, size_t size)
{
    const struct pi_requests *q = p->requests;
    const char *name = q && q->name ? q->name : "?";
    /* a model or a function of the user's own is named by its class or function */
    snprintf(out, size, "one per %s%s", name,
             q && (q->kind == PI_SPAN_MODULE || q->kind == PI_SPAN_NAMED) ? " call" : "");
    return out;
}

static double since_base(const struct pi_analysis *a, uint64_t ns)
{
    return ns > a->base_ns ? (double)(ns - a->base_ns) : 0;
}

/* What made @r slow next to the median request: "tokenizing took 4.1 ms, 9.1x the median";
 * for a generate() that made many more tokens, how many. */
static const char *slow_words(const struct pi_requests *q, const struct pi_request_slow *r,
                              char *out, size_t size)
{
    int k = r->slow_part;
    if (k < 0 || k >= PI_REQUEST_PART_COUNT)
        return "no part longer than the median's";
    double median = q->part_p50_ns[k], took = (double)r->part_ns[k];
    int n = median > 0 ? snprintf(out, size, "%s took %s, %.1fx the median", part_words[k],
                                  pi_format_ns(took), took / median)
                       : snprintf(out, size, "%s took %s, the median none", part_words[k],
                                  pi_format_ns(took));
    double median_tokens = q->generate.tokens_p50;
    if (n > 0 && (size_t)n < size && k == PI_REQUEST_MODEL && median_tokens > 0 &&
        (double)r->tokens >= 1.5 * median_tokens)
        snprintf(out + n, size - (size_t)n, "; it generated %" PRIu64 " tokens, the median %.0f",
                 r->tokens, median_tokens);
    return out;
}

static double share(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0;
}

static void print_generate(FILE *out, const struct pi_requests *q)
{
    const struct pi_request_generate *g = &q->generate;
    if (!g->calls)
        return;
    fprintf(out, "  generate          %" PRIu64 " calls, %" PRIu64 " tokens at %.1f tokens/s",
            g->calls, g->tokens, pi_requests_tokens_per_s(q));
    double prefill = pi_requests_prefill_share(q);
    if (prefill >= 0)
        fprintf(out, "; prefill %.0f%% of their model time", 100 * prefill);
    fputc('\n', out);
    uint64_t outside = pi_requests_outside_model_ns(q);
    if (g->tokens)
        fprintf(out, "  outside the model %s a token (%.0f%% of their time: sampling, stopping "
                     "checks, the streamer)\n",
                pi_format_ns((double)outside / (double)g->tokens), share(outside, g->total_ns));
    const struct pi_request_quantiles *first = &g->first_token, *each = &g->inter_token;
    if (first->count)
        fprintf(out, "  first token       p50 %s  p99 %s  max %s\n",
                pi_format_ns(first->ns[PI_REQUEST_P50]), pi_format_ns(first->ns[PI_REQUEST_P99]),
                pi_format_ns(first->ns[PI_REQUEST_MAX]));
    if (each->count)
        fprintf(out, "  per output token  p50 %s  p99 %s  max %s\n",
                pi_format_ns(each->ns[PI_REQUEST_P50]), pi_format_ns(each->ns[PI_REQUEST_P99]),
                pi_format_ns(each->ns[PI_REQUEST_MAX]));
}

static void print_slowest(FILE *out, const struct pi_analysis *a, const struct pi_requests *q)
{
    if (!q->slowest_count)
        return;
    fprintf(out, "  slowest           %8s %9s %9s %10s %9s %9s %9s %9s\n", "at", "duration",
            "thread", "tokenizing", "model", "other", "waiting", "gc");
    for (unsigned i = 0; i < q->slowest_count; i++) {
        const struct pi_request_slow *r = &q->slowest[i];
        char why[200];
        fprintf(out, "                    %6.2f s %9s %9u %10s %9s %9s %9s %9s\n",
                since_base(a, r->start_ns) / 1e9, pi_format_ns((double)r->dur_ns), r->tid,
                pi_format_ns((double)r->part_ns[PI_REQUEST_TOKENIZING]),
                pi_format_ns((double)r->part_ns[PI_REQUEST_MODEL]),
                pi_format_ns((double)r->part_ns[PI_REQUEST_OTHER]),
                pi_format_ns((double)r->part_ns[PI_REQUEST_WAITING]),
                pi_format_ns((double)r->part_ns[PI_REQUEST_COLLECTING]));
        fprintf(out, "                        %s\n", slow_words(q, r, why, sizeof(why)));
    }
}

static void print_process(FILE *out, const struct pi_analysis *a, const struct pi_process_info *p)
{
    const struct pi_requests *q = p->requests;
    char kind[300];
    uint64_t span = q->last_end_ns - q->first_start_ns, total = q->latency.total_ns;
    fprintf(out, "\nREQUESTS (pid %d, serving: %s)\n", p->header.pid,
            pi_request_kind_words(p, kind, sizeof(kind)));
    fprintf(out, "  requests          %" PRIu64 " on %" PRIu64 " thread%s over %s: %.2f/s\n",
            q->latency.count, q->threads, q->threads == 1 ? "" : "s", pi_format_ns((double)span),
            pi_requests_per_s(q));
    const double *latency = q->latency.ns;
    fprintf(out, "  latency           p50 %s  p90 %s  p95 %s  p99 %s  p99.9 %s  max %s\n",
            pi_format_ns(latency[PI_REQUEST_P50]), pi_format_ns(latency[PI_REQUEST_P90]),
            pi_format_ns(latency[PI_REQUEST_P95]), pi_format_ns(latency[PI_REQUEST_P99]),
            pi_format_ns(latency[PI_REQUEST_P99_9]), pi_format_ns(latency[PI_REQUEST_MAX]));
    fprintf(out, "  split             tokenizing %.0f%%  model %.0f%%  decoding and "
                 "post-processing %.0f%%  of %s\n",
            share(q->part_ns[PI_REQUEST_TOKENIZING], total),
            share(q->part_ns[PI_REQUEST_MODEL], total), share(q->part_ns[PI_REQUEST_OTHER], total),
            pi_format_ns((double)total));
    fprintf(out, "  waiting           %.0f%% of it in recorded calls (locks, I/O, GPU "
                 "synchronisation, sleeps)\n",
            share(q->part_ns[PI_REQUEST_WAITING], total));
    if (q->part_ns[PI_REQUEST_COLLECTING] || q->gc_between_ns)
        fprintf(out, "  garbage collection %.0f%% of it (%s), and %s between requests\n",
                share(q->part_ns[PI_REQUEST_COLLECTING], total),
                pi_format_ns((double)q->part_ns[PI_REQUEST_COLLECTING]),
                pi_format_ns((double)q->gc_between_ns));
    fprintf(out, "  median request    tokenizing %s  model %s  decoding and post-processing %s\n",
            pi_format_ns(q->part_p50_ns[PI_REQUEST_TOKENIZING]),
            pi_format_ns(q->part_p50_ns[PI_REQUEST_MODEL]),
            pi_format_ns(q->part_p50_ns[PI_REQUEST_OTHER]));
    print_generate(out, q);
    print_slowest(out, a, q);
}

void pi_report_requests_text(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info *subject = pi_training_process(a);
    size_t shown = 0, more = 0;
    if (subject && subject->requests) {
        print_process(out, a, subject);
        shown++;
    }
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        if (p == subject || !p->requests)
            continue;
        if (shown < TEXT_PROCESSES) {
            print_process(out, a, p);
            shown++;
        } else {
            more++;
        }
    }
    if (more)
        fprintf(out, "  (%zu more serving processes: in the JSON report)\n", more);
}

/* @q's count, total, mean and percentiles under the keys of every latency table ("p99_9_ns"). */
static cJSON *quantiles_json(cJSON *parent, const char *key, const struct pi_request_quantiles *q)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    pi_quantile_values_json(o, q->count, q->total_ns,
                            q->count ? (double)q->total_ns / (double)q->count : 0, q->ns);
    return o;
}

/* {"tokenizing_ns", "model_ns", "other_ns", "waiting_ns", "collecting_ns"} of @ns under @key. */
static void parts_json(cJSON *parent, const char *key, const double *ns)
{
    cJSON *o = key ? cJSON_AddObjectToObject(parent, key) : parent;
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof(name), "%s_ns", part_keys[k]);
        cJSON_AddNumberToObject(o, name, ns[k]);
    }
}

static void slowest_json(cJSON *o, const struct pi_analysis *a, const struct pi_requests *q)
{
    cJSON *list = cJSON_AddArrayToObject(o, "slowest");
    for (unsigned i = 0; i < q->slowest_count; i++) {
        const struct pi_request_slow *r = &q->slowest[i];
        cJSON *row = cJSON_CreateObject();
        double parts[PI_REQUEST_PART_COUNT];
        char why[200];
        cJSON_AddNumberToObject(row, "start_ns", since_base(a, r->start_ns));
        cJSON_AddNumberToObject(row, "duration_ns", (double)r->dur_ns);
        cJSON_AddNumberToObject(row, "tid", r->tid);
        for (int k = 0; k < PI_REQUEST_PART_COUNT; k++)
            parts[k] = (double)r->part_ns[k];
        parts_json(row, NULL, parts);
        if (r->slow_part >= 0 && r->slow_part < PI_REQUEST_PART_COUNT) {
            cJSON_AddStringToObject(row, "slow_part", part_keys[r->slow_part]);
            cJSON_AddNumberToObject(row, "median_part_ns", q->part_p50_ns[r->slow_part]);
        } else {
            cJSON_AddNullToObject(row, "slow_part");
        }
        cJSON_AddStringToObject(row, "why", slow_words(q, r, why, sizeof(why)));
        if (q->generate.calls) {
            cJSON_AddNumberToObject(row, "tokens", (double)r->tokens);
            cJSON_AddNumberToObject(row, "time_to_first_token_ns", (double)r->first_token_ns);
        }
        cJSON_AddItemToArray(list, row);
    }
}

static void generate_json(cJSON *o, const struct pi_requests *q)
{
    const struct pi_request_generate *g = &q->generate;
    if (!g->calls)
        return;
    cJSON *gen = cJSON_AddObjectToObject(o, "generate");
    cJSON_AddNumberToObject(gen, "calls", (double)g->calls);
    cJSON_AddNumberToObject(gen, "requests", (double)g->requests);
    cJSON_AddNumberToObject(gen, "tokens", (double)g->tokens);
    cJSON_AddNumberToObject(gen, "tokens_per_request_p50", g->tokens_p50);
    cJSON_AddNumberToObject(gen, "total_ns", (double)g->total_ns);
    cJSON_AddNumberToObject(gen, "tokens_per_s", pi_requests_tokens_per_s(q));
    cJSON_AddNumberToObject(gen, "prefill_ns", (double)g->prefill_ns);
    cJSON_AddNumberToObject(gen, "decode_ns", (double)g->decode_ns);
    cJSON_AddNumberToObject(gen, "prefill_share", pi_requests_prefill_share(q));
    cJSON_AddNumberToObject(gen, "outside_model_ns", (double)pi_requests_outside_model_ns(q));
    quantiles_json(gen, "time_to_first_token", &g->first_token);
    quantiles_json(gen, "inter_token", &g->inter_token);
}

void pi_report_requests_json(cJSON *process, const struct pi_analysis *a,
                             const struct pi_process_info *p)
{
    const struct pi_requests *q = p->requests;
    if (!q)
        return;
    cJSON *o = cJSON_AddObjectToObject(process, "requests");
    cJSON_AddStringToObject(o, "from", q->name ? q->name : "?");
    cJSON_AddStringToObject(o, "kind", pi_span_kind_name(q->kind));
    cJSON_AddNumberToObject(o, "count", (double)q->latency.count);
    cJSON_AddNumberToObject(o, "per_s", pi_requests_per_s(q));
    cJSON_AddNumberToObject(o, "threads", (double)q->threads);
    cJSON_AddNumberToObject(o, "start_ns", since_base(a, q->first_start_ns));
    cJSON_AddNumberToObject(o, "span_ns", (double)(q->last_end_ns - q->first_start_ns));
    cJSON_AddNumberToObject(o, "cpu_ns", (double)q->cpu_ns);
    cJSON_AddNumberToObject(o, "cpu_requests", (double)q->cpu_calls);
    quantiles_json(o, "latency", &q->latency);
    double sums[PI_REQUEST_PART_COUNT];
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++)
        sums[k] = (double)q->part_ns[k];
    parts_json(o, "split", sums);
    cJSON_AddNumberToObject(cJSON_GetObjectItem(o, "split"), "sync_ns", (double)q->sync_ns);
    cJSON_AddNumberToObject(o, "collecting_between_ns", (double)q->gc_between_ns);
    parts_json(o, "median_split", q->part_p50_ns);
    slowest_json(o, a, q);
    generate_json(o, q);
}

void pi_report_requests_html(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info *p = pi_training_process(a);
    const struct pi_requests *q = p ? p->requests : NULL;
    if (!q)
        return;
    char kind[300];
    uint64_t total = q->latency.total_ns;
    fprintf(out, "<h2>Requests</h2>\n<p>pid %d, serving: ", p->header.pid);
    pi_html_text(out, pi_request_kind_words(p, kind, sizeof(kind)));
    fprintf(out, ". %" PRIu64 " requests on %" PRIu64 " thread%s, %.2f/s.</p>\n",
            q->latency.count, q->threads, q->threads == 1 ? "" : "s", pi_requests_per_s(q));
    fputs("<table id=\"requests\"><tr><th>p50</th><th>p90</th><th>p95</th><th>p99</th>"
          "<th>p99.9</th><th>max</th><th>tokenizing</th><th>model</th>"
          "<th>decoding and post-processing</th><th>waiting</th><th>garbage collection</th>"
          "</tr>\n<tr>",
          out);
    for (int i = 0; i < PI_REQUEST_QUANTILE_COUNT; i++)
        fprintf(out, "<td>%s</td>", pi_format_ns(q->latency.ns[i]));
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++)
        fprintf(out, "<td>%.0f%%</td>", share(q->part_ns[k], total));
    fputs("</tr>\n</table>\n", out);
    fputs("<table id=\"requests-slowest\"><tr><th>at</th><th>duration</th><th>thread</th>"
          "<th>tokenizing</th><th>model</th><th>other</th><th>waiting</th>"
          "<th>garbage collection</th><th>what made it slow</th></tr>\n",
          out);
    for (unsigned i = 0; i < q->slowest_count; i++) {
        const struct pi_request_slow *r = &q->slowest[i];
        char why[200];
        fprintf(out, "<tr><td>%.2f s</td><td>%s</td><td>%u</td>", since_base(a, r->start_ns) / 1e9,
                pi_format_ns((double)r->dur_ns), r->tid);
        for (int k = 0; k < PI_REQUEST_PART_COUNT; k++)
            fprintf(out, "<td>%s</td>", pi_format_ns((double)r->part_ns[k]));
        fputs("<td>", out);
        pi_html_text(out, slow_words(q, r, why, sizeof(why)));
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}
