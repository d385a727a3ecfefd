/*
 * Unit: the requests of a process serving generate() (analysis/host/requests.h),
 * against requests whose every forward pass the test made (serving_trace.c):
 * generate() called on its own, one forward pass a token (the first the
 * prefill), and a text-generation pipeline whose requests each hold a
 * tokenizer, a model of their own before generate() (the model's time, no
 * token) and generate(), half of them wrapped in a PEFT model's generate()
 * (counted once, from the outer one's entry). Time to first token and per
 * output token against the test's own arithmetic, exact with --exact;
 * tokens, tokens per second, the prefill's share, the median request's
 * tokens, each slowest request's tokens and time to first token; the
 * model's time of the requests holds every forward pass; the JSON's fields.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/report.h"
#include "serving_trace.h"

static void near(double got, double want, int exact, const char *what)
{
    double tolerance = exact ? 1e-9 * want + 1e-6 : PI_HISTOGRAM_RELATIVE_ERROR * want + 1;
    cr_assert(fabs(got - want) <= tolerance, "%s: %.1f, truth %.1f", what, got, want);
}

static const char *generate_trace(unsigned requests, int in_pipeline)
{
    struct serving_names n;
    serving_begin(&n);
    uint32_t tid = (uint32_t)getpid();
    uint64_t t = 1000 * MS;
    for (unsigned i = 0; i < requests; i++) {
        uint64_t idle = serving_random(200 * US, 4 * MS);
        serving_idle(tid, t + 10 * US, t + idle - 10 * US);
        t = serving_generate_request(&n, tid, t + idle, in_pipeline, in_pipeline && i % 2);
    }
    return span_trace_write();
}

/* The generate() figures of @q against the test's. */
static void check_generate(const struct pi_requests *q, int exact)
{
    const struct pi_request_generate *g = &q->generate;
    cr_assert_eq(g->calls, serving.generate_calls, "%llu generate() calls",
                 (unsigned long long)g->calls);
    cr_assert_eq(g->requests, serving.count);
    cr_assert_eq(g->tokens, serving.tokens, "%llu tokens, %llu made",
                 (unsigned long long)g->tokens, (unsigned long long)serving.tokens);
    cr_assert_eq(g->total_ns, serving.generate_ns);
    cr_assert_eq(g->prefill_ns, serving.prefill_ns);
    cr_assert_eq(g->decode_ns, serving.decode_ns);
    near(pi_requests_tokens_per_s(q), (double)serving.tokens * 1e9 / (double)serving.generate_ns,
         1, "tokens/s");
    near(pi_requests_prefill_share(q),
         (double)serving.prefill_ns / (double)(serving.prefill_ns + serving.decode_ns), 1,
         "prefill share");
    static uint64_t first[SERVING_REQUESTS_MAX];
    memcpy(first, serving.first_tokens, serving.first_token_count * sizeof(*first));
    pi_sort_u64(first, serving.first_token_count);
    pi_sort_u64(serving.gaps, serving.gap_count);
    cr_assert_eq(g->first_token.count, serving.first_token_count);
    cr_assert_eq(g->inter_token.count, serving.gap_count, "%llu gaps, %zu made",
                 (unsigned long long)g->inter_token.count, serving.gap_count);
    for (int i = 0; i < PI_REQUEST_QUANTILE_COUNT; i++) {
        double level = pi_request_quantile_levels[i];
        near(g->first_token.ns[i], span_quantile(first, serving.first_token_count, level), exact,
             "time to first token");
        near(g->inter_token.ns[i], span_quantile(serving.gaps, serving.gap_count, level), exact,
             "time per output token");
    }
    static uint64_t tokens[SERVING_REQUESTS_MAX];
    for (size_t i = 0; i < serving.count; i++)
        tokens[i] = serving.requests[i].tokens;
    pi_sort_u64(tokens, serving.count);
    near(g->tokens_p50, span_quantile(tokens, serving.count, 0.5), exact, "tokens p50");
    /* every forward pass is the model's, the one before generate() too */
    uint64_t model = 0;
    for (size_t i = 0; i < serving.count; i++)
        model += serving.requests[i].part[PI_REQUEST_MODEL];
    cr_assert_eq(q->part_ns[PI_REQUEST_MODEL], model);
    cr_assert_eq(q->latency.count, serving.count);
    cr_assert_eq(q->slowest_count, PI_REQUEST_SLOWEST);
    for (unsigned i = 0; i < q->slowest_count; i++) {
        const struct request_truth *r = &serving.requests[serving_slowest(i)];
        cr_assert_eq(q->slowest[i].dur_ns, r->end - r->start);
        cr_assert_eq(q->slowest[i].tokens, r->tokens, "slowest %u: %llu tokens, %llu made", i,
                     (unsigned long long)q->slowest[i].tokens, (unsigned long long)r->tokens);
        cr_assert_eq(q->slowest[i].first_token_ns, r->first_token);
    }
}

Test(request_generate, generate_called_on_its_own_exact)
{
    struct pi_analysis a = span_trace_analyse(generate_trace(60, 0), 1, NULL);
    const struct pi_requests *q = a.processes[0].requests;
    cr_assert(q, "generate() calls are requests");
    cr_assert_str_eq(q->name, "GPT2LMHeadModel.generate");
    cr_assert_eq(q->kind, PI_SPAN_GENERATE);
    check_generate(q, 1);
    pi_analysis_free(&a);
}

Test(request_generate, tokens_at_their_stopping_checks)
{
    serving_token_checks = 1;
    struct pi_analysis a = span_trace_analyse(generate_trace(60, 0), 1, NULL);
    serving_token_checks = 0;
    const struct pi_requests *q = a.processes[0].requests;
    cr_assert(q, "generate() calls are requests");
    check_generate(q, 1);
    pi_analysis_free(&a);
}

Test(request_generate, generate_within_the_histograms_error)
{
    struct pi_analysis a = span_trace_analyse(generate_trace(60, 0), 0, NULL);
    cr_assert(a.processes[0].requests);
    check_generate(a.processes[0].requests, 0);
    pi_analysis_free(&a);
}

Test(request_generate, text_generation_pipeline_wrapped_or_not)
{
    struct pi_analysis a = span_trace_analyse(generate_trace(40, 1), 1, NULL);
    const struct pi_requests *q = a.processes[0].requests;
    cr_assert(q);
    cr_assert_str_eq(q->name, "TextGenerationPipeline.__call__");
    cr_assert_eq(q->kind, PI_SPAN_PIPELINE);
    check_generate(q, 1);
    uint64_t tokenizing = 0;
    for (size_t i = 0; i < serving.count; i++)
        tokenizing += serving.requests[i].part[PI_REQUEST_TOKENIZING];
    cr_assert_eq(q->part_ns[PI_REQUEST_TOKENIZING], tokenizing);
    pi_analysis_free(&a);
}

static double number(const cJSON *o, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(item), "%s is a number", key);
    return item->valuedouble;
}

Test(request_generate, json_generate_fields)
{
    struct pi_analysis a = span_trace_analyse(generate_trace(50, 0), 1, NULL);
    cJSON *root = pi_report_json_object(&a);
    const cJSON *o = cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(root, "processes"), 0), "requests");
    cr_assert(cJSON_IsObject(o));
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(o, "kind")), "generate");
    const cJSON *g = cJSON_GetObjectItem(o, "generate");
    cr_assert(cJSON_IsObject(g), "requests.generate");
    cr_assert_eq(number(g, "calls"), (double)serving.generate_calls);
    cr_assert_eq(number(g, "tokens"), (double)serving.tokens);
    near(number(g, "tokens_per_s"), (double)serving.tokens * 1e9 / (double)serving.generate_ns, 1,
         "tokens_per_s");
    near(number(g, "prefill_share"),
         (double)serving.prefill_ns / (double)(serving.prefill_ns + serving.decode_ns), 1,
         "prefill_share");
    static uint64_t first[SERVING_REQUESTS_MAX];
    memcpy(first, serving.first_tokens, serving.first_token_count * sizeof(*first));
    pi_sort_u64(first, serving.first_token_count);
    pi_sort_u64(serving.gaps, serving.gap_count);
    const cJSON *ttft = cJSON_GetObjectItem(g, "time_to_first_token");
    const cJSON *each = cJSON_GetObjectItem(g, "inter_token");
    near(number(ttft, "p50_ns"), span_quantile(first, serving.first_token_count, 0.5), 1, "ttft");
    near(number(ttft, "p99_ns"), span_quantile(first, serving.first_token_count, 0.99), 1, "ttft");
    near(number(each, "p50_ns"), span_quantile(serving.gaps, serving.gap_count, 0.5), 1, "gap");
    near(number(each, "p99_ns"), span_quantile(serving.gaps, serving.gap_count, 0.99), 1, "gap");
    cr_assert_eq(number(each, "count"), (double)serving.gap_count);
    const cJSON *top = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "slowest"), 0);
    const struct request_truth *r = &serving.requests[serving_slowest(0)];
    cr_assert_eq(number(top, "tokens"), (double)r->tokens);
    cr_assert_eq(number(top, "time_to_first_token_ns"), (double)r->first_token);
    cJSON_Delete(root);
    pi_analysis_free(&a);
}
