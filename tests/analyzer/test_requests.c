/*
 * Unit: the requests a serving process answered (analysis/host/requests.h),
 * against serving traces whose every call the test made (serving_trace.c):
 * a text-classification pipeline whose requests each hold a tokenizer (at
 * times a processor around it) and the model, between waits for the next
 * request, beside a model loaded and called on its own. The count, the
 * requests per second, the latency percentiles (exact against the sorted
 * durations with --exact, within the histograms' error without), the sums
 * of tokenizing, model, the rest and the waits inside, the median request's
 * parts, the five slowest with the part that made each slow; then the
 * JSON's fields, the text's lines and the verdict's words. Requests on two
 * threads count on each; a process that trains (an optimizer's step or a
 * backward call) serves none, nor one with a single request.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/report.h"
#include "serving_trace.h"
#include "verdicts/verdict.h"

#define PIPELINE_REQUESTS 200

static const char *const part_keys[PI_REQUEST_PART_COUNT] = {"tokenizing", "model", "other",
                                                             "waiting", "collecting"};

static void near(double got, double want, int exact, const char *what)
{
    double tolerance = exact ? 1e-9 * want + 1e-6 : PI_HISTOGRAM_RELATIVE_ERROR * want + 1;
    cr_assert(fabs(got - want) <= tolerance, "%s: %.1f, truth %.1f", what, got, want);
}

/* Requests that the test made slow: the index of each, and the part it made slow. */
static const struct {
    size_t index;
    enum serving_slow slow;
    int part;
} made_slow[] = {
    {17, SLOW_TOKENIZING, PI_REQUEST_TOKENIZING},
    {55, SLOW_MODEL, PI_REQUEST_MODEL},
    {90, SLOW_OTHER, PI_REQUEST_OTHER},
    {130, SLOW_WAITING, PI_REQUEST_WAITING},
};
#define MADE_SLOW (sizeof(made_slow) / sizeof(made_slow[0]))

/* A model loaded, called three times on its own, then the pipeline's requests, with waits for
 * the next one between them. */
static const char *pipeline_trace(void)
{
    struct serving_names n;
    serving_begin(&n);
    uint32_t tid = (uint32_t)getpid();
    uint64_t t = 1000 * MS;
    serving_call(tid, n.pretrained, PI_SPAN_FROM_PRETRAINED, 0, t, t + 50 * MS);
    t += 60 * MS;
    for (int i = 0; i < 3; i++, t += 10 * MS) /* warm-up calls of the model, outside any */
        serving_call(tid, n.model, PI_SPAN_MODULE, 0, t, t + 8 * MS);
    for (size_t i = 0; i < PIPELINE_REQUESTS; i++) {
        enum serving_slow slow = SLOW_NONE;
        for (size_t k = 0; k < MADE_SLOW; k++)
            slow = made_slow[k].index == i ? made_slow[k].slow : slow;
        uint64_t idle = serving_random(100 * US, 5 * MS);
        uint64_t waits_from = t + 20 * US;
        if (i % 9 == 0) { /* a collection before the next request: between two after the first */
            serving_idle_collection(&n, tid, t + 5 * US, t + 5 * US + idle / 4, i > 0);
            waits_from += idle / 4;
        }
        serving_idle(tid, waits_from, t + idle - 20 * US);
        t = serving_pipeline_request(&n, tid, t + idle, slow);
    }
    serving_end(t + 1 * MS);
    return span_trace_write();
}

/* @q against what the test made: latency, rate, parts, the slowest. */
static void check_requests(const struct pi_requests *q, int exact, unsigned kind, const char *name)
{
    cr_assert(q, "the process serves requests");
    cr_assert_str_eq(q->name, name);
    cr_assert_eq(q->kind, kind, "%u", q->kind);
    static uint64_t sorted[SERVING_REQUESTS_MAX];
    size_t n = serving_sorted(PI_REQUEST_PART_COUNT, sorted);
    uint64_t total = 0, first = UINT64_MAX, last = 0, parts[PI_REQUEST_PART_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        const struct request_truth *r = &serving.requests[i];
        total += r->end - r->start;
        first = r->start < first ? r->start : first;
        last = r->end > last ? r->end : last;
        for (int k = 0; k < PI_REQUEST_PART_COUNT; k++)
            parts[k] += r->part[k];
    }
    cr_assert_eq(q->latency.count, n, "%llu requests, %zu made",
                 (unsigned long long)q->latency.count, n);
    cr_assert_eq(q->latency.total_ns, total);
    for (int i = 0; i < PI_REQUEST_QUANTILE_COUNT; i++)
        near(q->latency.ns[i], span_quantile(sorted, n, pi_request_quantile_levels[i]), exact,
             "latency percentile");
    near(pi_requests_per_s(q), (double)n * 1e9 / (double)(last - first), 1, "requests/s");
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++) {
        cr_assert_eq(q->part_ns[k], parts[k], "%s: %llu, truth %llu", part_keys[k],
                     (unsigned long long)q->part_ns[k], (unsigned long long)parts[k]);
        near(q->part_p50_ns[k], serving_median(k), exact, part_keys[k]);
    }
    cr_assert_eq(q->slowest_count, n < PI_REQUEST_SLOWEST ? n : PI_REQUEST_SLOWEST);
    for (unsigned i = 0; i < q->slowest_count; i++) {
        const struct pi_request_slow *s = &q->slowest[i];
        const struct request_truth *r = &serving.requests[serving_slowest(i)];
        cr_assert_eq(s->start_ns, r->start, "slowest %u", i);
        cr_assert_eq(s->dur_ns, r->end - r->start, "slowest %u", i);
        cr_assert_eq(s->tid, r->tid);
        for (int k = 0; k < PI_REQUEST_PART_COUNT; k++)
            cr_assert_eq(s->part_ns[k], r->part[k], "slowest %u's %s", i, part_keys[k]);
        if (exact) /* the medians are the test's own */
            cr_assert_eq(s->slow_part, serving_slow_part(serving_slowest(i)), "slowest %u", i);
    }
}

static void check_pipeline(int exact)
{
    struct pi_analysis a = span_trace_analyse(pipeline_trace(), exact, NULL);
    const struct pi_requests *q = a.processes[0].requests;
    check_requests(q, exact, PI_SPAN_PIPELINE, "TextClassificationPipeline.__call__");
    cr_assert_eq(q->threads, 1);
    cr_assert_eq(q->generate.calls, 0, "no generate() ran");
    cr_assert_gt(serving.gc_between, 0);
    cr_assert_eq(q->gc_between_ns, serving.gc_between, "%llu, truth %llu",
                 (unsigned long long)q->gc_between_ns, (unsigned long long)serving.gc_between);
    /* the requests made slow are the slowest, each slow by the part made slow */
    for (size_t k = 0; k < MADE_SLOW; k++) {
        unsigned found = PI_REQUEST_SLOWEST;
        for (unsigned i = 0; i < q->slowest_count; i++)
            if (q->slowest[i].start_ns == serving.requests[made_slow[k].index].start)
                found = i;
        cr_assert_lt(found, MADE_SLOW, "request %zu is among the slowest", made_slow[k].index);
        cr_assert_eq(q->slowest[found].slow_part, made_slow[k].part, "request %zu: part %d",
                     made_slow[k].index, q->slowest[found].slow_part);
    }
    pi_analysis_free(&a);
}

Test(requests, pipeline_requests_exact)
{
    check_pipeline(1);
}

Test(requests, pipeline_requests_within_the_histograms_error)
{
    check_pipeline(0);
}

static double number(const cJSON *o, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(item), "%s is a number", key);
    return item->valuedouble;
}

Test(requests, json_text_and_key_numbers)
{
    struct pi_analysis a = span_trace_analyse(pipeline_trace(), 1, NULL);
    const struct pi_requests *q = a.processes[0].requests;
    cr_assert(q);
    cJSON *root = pi_report_json_object(&a);
    const cJSON *o = cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(root, "processes"), 0), "requests");
    cr_assert(cJSON_IsObject(o), "processes[0].requests");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(o, "from")),
                     "TextClassificationPipeline.__call__");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(o, "kind")), "pipeline");
    static uint64_t sorted[SERVING_REQUESTS_MAX];
    size_t n = serving_sorted(PI_REQUEST_PART_COUNT, sorted);
    cr_assert_eq(number(o, "count"), (double)n);
    cr_assert_eq(number(o, "threads"), 1);
    const struct request_truth *first = &serving.requests[0], *last = &serving.requests[n - 1];
    near(number(o, "per_s"), (double)n * 1e9 / (double)(last->end - first->start), 1, "per_s");
    const cJSON *latency = cJSON_GetObjectItem(o, "latency");
    near(number(latency, "p50_ns"), span_quantile(sorted, n, 0.5), 1, "p50_ns");
    near(number(latency, "p99_ns"), span_quantile(sorted, n, 0.99), 1, "p99_ns");
    near(number(latency, "p99_9_ns"), span_quantile(sorted, n, 0.999), 1, "p99_9_ns");
    cr_assert_eq(number(latency, "max_ns"), (double)sorted[n - 1]);
    cr_assert_eq(number(latency, "count"), (double)n);
    const cJSON *split = cJSON_GetObjectItem(o, "split");
    const cJSON *median = cJSON_GetObjectItem(o, "median_split");
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++) {
        char key[32];
        snprintf(key, sizeof(key), "%s_ns", part_keys[k]);
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += serving.requests[i].part[k];
        cr_assert_eq(number(split, key), (double)sum, "split.%s", key);
        near(number(median, key), serving_median(k), 1, key);
    }
    const cJSON *slowest = cJSON_GetObjectItem(o, "slowest");
    cr_assert_eq(cJSON_GetArraySize(slowest), PI_REQUEST_SLOWEST);
    const cJSON *top = cJSON_GetArrayItem(slowest, 0);
    const struct request_truth *r = &serving.requests[serving_slowest(0)];
    cr_assert_eq(number(top, "duration_ns"), (double)(r->end - r->start));
    cr_assert_eq(number(top, "start_ns"), (double)(r->start - a.base_ns));
    cr_assert_eq(number(top, "tid"), (double)getpid());
    int part = serving_slow_part(serving_slowest(0));
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(top, "slow_part")), part_keys[part]);
    cr_assert(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(top, "why")), " took "));
    cr_assert_null(cJSON_GetObjectItem(o, "generate"), "no generate() ran");
    cJSON_Delete(root);

    char *text = NULL, line[200];
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    pi_report_text(out, &a);
    fclose(out);
    snprintf(line, sizeof(line),
             "\nREQUESTS (pid %d, serving: one per TextClassificationPipeline.__call__)\n",
             getpid());
    cr_assert(strstr(text, line), "%s", text);
    snprintf(line, sizeof(line), "\n  requests          %zu at ", n);
    cr_assert(strstr(text, line), "the key numbers' line: %s", text);
    cr_assert(strstr(text, "\n  latency           p50 "), "%s", text);
    cr_assert(strstr(text, "\n  split             tokenizing "), "%s", text);
    cr_assert_null(strstr(text, "steps             none found"), "a serving process has requests");
    /* the made-slow tokenizing request, said as such */
    cr_assert(strstr(text, "tokenizing took "), "%s", text);
    free(text);
    pi_analysis_free(&a);
}

Test(requests, serving_verdict_speaks_of_requests)
{
    struct pi_analysis a = span_trace_analyse(pipeline_trace(), 0, NULL);
    struct pi_finding findings[PI_MAX_FINDINGS];
    int count = pi_verdict(&a, findings);
    cr_assert_geq(count, 1);
    const struct pi_finding *f = &findings[0];
    /* every request computed 9/10 of its time on its thread's clock */
    cr_assert_str_eq(f->kind, "compute-bound", "%s: %s", f->kind, f->summary);
    cr_assert_float_eq(f->score, 0.9, 0.01, "%f", f->score);
    cr_assert(strstr(f->summary, "serving loop"), "%s", f->summary);
    cr_assert(strstr(f->summary, "requests"), "%s", f->summary);
    cr_assert_null(strstr(f->summary, "training"), "%s", f->summary);
    cr_assert(strstr(f->advice, "torch.inference_mode"), "%s", f->advice);
    cr_assert_null(strstr(f->advice, "DataLoader"), "%s", f->advice);
    /* tokenizing took about a tenth of these requests: no finding of its own */
    for (int i = 0; i < count; i++)
        cr_assert_str_neq(findings[i].kind, "tokenizer-bound");
    pi_analysis_free(&a);
}

/* Requests whose tokenizer takes most of them: every one made slow by its tokenizing. */
Test(requests, a_tokenizer_that_takes_most_of_the_requests_is_a_finding)
{
    struct serving_names n;
    serving_begin(&n);
    uint32_t tid = (uint32_t)getpid();
    uint64_t t = 1000 * MS;
    for (int i = 0; i < 40; i++) {
        serving_idle(tid, t + 20 * US, t + 500 * US);
        t = serving_pipeline_request(&n, tid, t + 520 * US, SLOW_TOKENIZING);
    }
    serving_end(t + 1 * MS);
    struct pi_analysis a = span_trace_analyse(span_trace_write(), 1, NULL);
    uint64_t tokenizing = 0, total = 0;
    for (size_t i = 0; i < serving.count; i++) {
        tokenizing += serving.requests[i].part[PI_REQUEST_TOKENIZING];
        total += serving.requests[i].end - serving.requests[i].start;
    }
    struct pi_finding findings[PI_MAX_FINDINGS];
    int count = pi_verdict(&a, findings);
    /* the cause first: it explains more than half of the computing */
    cr_assert_geq(count, 2);
    cr_assert_str_eq(findings[0].kind, "tokenizer-bound", "%s: %s", findings[0].kind,
                     findings[0].summary);
    cr_assert_float_eq(findings[0].score, (double)tokenizing / (double)total, 1e-9);
    cr_assert_str_eq(findings[1].kind, "compute-bound");
    cr_assert(strstr(findings[0].advice, "use_fast=True"), "%s", findings[0].advice);
    pi_analysis_free(&a);
}

Test(requests, requests_on_two_threads_count_on_each)
{
    struct serving_names n;
    serving_begin(&n);
    uint32_t threads[2] = {(uint32_t)getpid(), (uint32_t)getpid() + 1}, waiter = getpid() + 2;
    for (int k = 0; k < 2; k++) {
        uint64_t t = 1000 * MS + (uint64_t)k * 700 * US;
        for (int i = 0; i < 80 + 40 * k; i++) {
            uint64_t idle = serving_random(50 * US, 3 * MS);
            serving_idle(threads[k], t + 10 * US, t + idle - 10 * US);
            t = serving_handle_request(&n, threads[k], t + idle);
        }
    }
    serving_idle(waiter, 1000 * MS, 1400 * MS); /* a thread that only waits */
    struct pi_analysis a = span_trace_analyse(span_trace_write(), 1, NULL);
    const struct pi_requests *q = a.processes[0].requests;
    check_requests(q, 1, PI_SPAN_NAMED, "server:handle");
    cr_assert_eq(q->latency.count, 200);
    cr_assert_eq(q->threads, 2, "%llu", (unsigned long long)q->threads);
    pi_analysis_free(&a);
}

/* A thread that polls hundreds of times between requests, each request waiting a hundred
 * times: its waits are still those inside it (past 64 waits between two returns, a few of the
 * first inside may count as before it: a few percent here, never one before it). */
Test(requests, many_waits_between_requests)
{
    struct serving_names n;
    serving_begin(&n);
    uint32_t tid = (uint32_t)getpid();
    uint64_t t = 1000 * MS, inside = 0;
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < 300; i++, t += 150 * US) /* polling for the next request */
            span_trace_wait(tid, PI_WAIT_COND, t, 100 * US);
        uint64_t start = t;
        for (int i = 0; i < 100; i++, t += 50 * US) { /* the GIL, handed back and forth */
            span_trace_wait(tid, PI_WAIT_MUTEX, t + 10 * US, 20 * US);
            inside += 20 * US;
        }
        serving_call(tid, n.handle, PI_SPAN_NAMED, 0, start, t + 10 * US);
        t += 20 * US;
    }
    struct pi_analysis a = span_trace_analyse(span_trace_write(), 1, NULL);
    const struct pi_requests *q = a.processes[0].requests;
    cr_assert(q);
    uint64_t waited = q->part_ns[PI_REQUEST_WAITING];
    cr_assert(waited <= inside && waited >= inside / 10 * 9, "%llu ns of %llu inside",
              (unsigned long long)waited, (unsigned long long)inside);
    pi_analysis_free(&a);
}

/* The pipeline's requests, and then @what: an optimizer's step, a backward call. */
static const struct pi_requests *requests_with(struct pi_analysis *a, int exact, unsigned what,
                                              unsigned requests)
{
    struct serving_names n;
    serving_begin(&n);
    uint32_t tid = (uint32_t)getpid();
    uint64_t t = 1000 * MS;
    for (unsigned i = 0; i < requests; i++)
        t = serving_pipeline_request(&n, tid, t + 1 * MS, SLOW_NONE);
    if (what == PI_SPAN_OPTIMIZER_STEP || what == PI_SPAN_BACKWARD)
        serving_call(tid, what == PI_SPAN_BACKWARD ? n.backward : n.optimizer, what, 0, t + MS,
                     t + 3 * MS);
    else if (what == PI_SPAN_TOKENIZER) /* tokenizers called on their own serve nothing */
        for (int i = 0; i < 10; i++, t += 2 * MS)
            serving_call(tid, n.tokenizer, PI_SPAN_TOKENIZER, 0, t + MS, t + 2 * MS);
    *a = span_trace_analyse(span_trace_write(), exact, NULL);
    return a->processes[0].requests;
}

Test(requests, a_training_process_serves_none)
{
    struct pi_analysis a;
    cr_assert(requests_with(&a, 1, PI_SPAN_NAMED, 30), "the same calls alone serve requests");
    pi_analysis_free(&a);
    cr_assert_null(requests_with(&a, 1, PI_SPAN_OPTIMIZER_STEP, 30), "an optimizer stepped");
    cJSON *root = pi_report_json_object(&a);
    cr_assert_null(cJSON_GetObjectItem(
                       cJSON_GetArrayItem(cJSON_GetObjectItem(root, "processes"), 0), "requests"),
                   "no requests in the JSON of a training process");
    cJSON_Delete(root);
    struct pi_finding findings[PI_MAX_FINDINGS];
    int count = pi_verdict(&a, findings);
    for (int i = 0; i < count; i++)
        cr_assert_null(strstr(findings[i].summary, "serving"), "%s", findings[i].summary);
    pi_analysis_free(&a);
    cr_assert_null(requests_with(&a, 0, PI_SPAN_BACKWARD, 30), "a backward call");
    pi_analysis_free(&a);
    cr_assert_null(requests_with(&a, 1, PI_SPAN_NAMED, 1), "one request is no serving");
    pi_analysis_free(&a);
    cr_assert_null(requests_with(&a, 1, PI_SPAN_TOKENIZER, 0), "tokenizers alone serve nothing");
    pi_analysis_free(&a);
}
