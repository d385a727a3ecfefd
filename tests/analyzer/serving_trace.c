/* serving_trace.c - synthetic traces of processes serving requests (see serving_trace.h). */
#include "serving_trace.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

struct serving_truth serving;

void serving_begin(struct serving_names *n)
{
    span_trace_begin();
    memset(&serving, 0, sizeof(serving));
    n->pipeline = span_trace_name("TextClassificationPipeline.__call__");
    n->text_generation = span_trace_name("TextGenerationPipeline.__call__");
    n->tokenizer = span_trace_name("BertTokenizerFast.__call__");
    n->processor = span_trace_name("AutoProcessor.__call__");
    n->model = span_trace_name("BertForSequenceClassification");
    n->lm = span_trace_name("GPT2LMHeadModel");
    n->safety = span_trace_name("SafetyClassifier");
    n->gc = span_trace_name("gc.collect");
    n->generate = span_trace_name("GPT2LMHeadModel.generate");
    n->peft_generate = span_trace_name("PeftModelForCausalLM.generate");
    n->handle = span_trace_name("server:handle");
    n->pretrained = span_trace_name("BertForSequenceClassification.from_pretrained");
    n->optimizer = span_trace_name("AdamW.step");
    n->backward = span_trace_name("Tensor.backward");
    n->check = span_trace_name("StoppingCriteriaList.__call__");
}

int serving_token_checks;

uint64_t serving_random(uint64_t lo, uint64_t hi)
{
    static uint64_t x = 0x9e3779b97f4a7c15ull;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return lo + x % (hi - lo + 1);
}

void serving_call(uint32_t tid, uint32_t name, unsigned kind, unsigned depth, uint64_t start,
                  uint64_t end)
{
    struct span_call c = {tid, start, end, name, kind, depth, 0, (end - start) / 10 * 9, 0};
    span_trace_call(&c);
}

static struct request_truth *new_request(uint32_t tid, uint64_t start)
{
    cr_assert_lt(serving.count, SERVING_REQUESTS_MAX);
    struct request_truth *r = &serving.requests[serving.count++];
    memset(r, 0, sizeof(*r));
    r->tid = tid;
    r->start = start;
    return r;
}

/* The request's parts once its end and its tokenizing and model time are known. */
static void settle(struct request_truth *r, uint64_t end, uint64_t tokenizing, uint64_t model,
                   uint64_t waiting, uint64_t collecting)
{
    r->end = end;
    r->part[PI_REQUEST_TOKENIZING] = tokenizing;
    r->part[PI_REQUEST_MODEL] = model;
    r->part[PI_REQUEST_OTHER] = end - r->start - tokenizing - model;
    r->part[PI_REQUEST_WAITING] = waiting;
    r->part[PI_REQUEST_COLLECTING] = collecting;
}

/* A tokenizer call from @at for @dur: sometimes a processor around the tokenizer itself,
 * sometimes a garbage collection inside; the tokenizing is @dur either way. Its collection's
 * time, 0: none. */
static uint64_t tokenize(const struct serving_names *n, uint32_t tid, uint64_t at, uint64_t dur)
{
    if (serving_random(0, 3) == 0) { /* a processor calling its tokenizer */
        serving_call(tid, n->tokenizer, PI_SPAN_TOKENIZER, 2, at + 10 * US, at + dur / 2);
        serving_call(tid, n->processor, PI_SPAN_TOKENIZER, 1, at, at + dur);
        return 0;
    }
    uint64_t collected = 0;
    if (serving_random(0, 4) == 0) {
        serving_call(tid, n->gc, PI_SPAN_GC, 2, at + dur / 3, at + dur / 2);
        collected = dur / 2 - dur / 3;
    }
    serving_call(tid, n->tokenizer, PI_SPAN_TOKENIZER, 1, at, at + dur);
    return collected;
}

uint64_t serving_pipeline_request(const struct serving_names *n, uint32_t tid, uint64_t start,
                                  enum serving_slow slow)
{
    struct request_truth *r = new_request(tid, start);
    uint64_t tokenizing = serving_random(200 * US, 900 * US);
    uint64_t model = serving_random(2 * MS, 6 * MS), post = serving_random(100 * US, 800 * US);
    uint64_t waited = serving_random(0, 2) ? serving_random(5 * US, 200 * US) : 0, slept = 0;
    /* each slower than any other request, by one part */
    tokenizing += slow == SLOW_TOKENIZING ? 12 * MS : 0;
    model += slow == SLOW_MODEL ? 25 * MS : 0;
    post += slow == SLOW_OTHER ? 15 * MS : 0;
    if (slow == SLOW_WAITING) /* its post-processing only a sleep: waiting is what is slow */
        post = (slept = 40 * MS) + 10 * US;
    uint64_t t = start + 30 * US;
    uint64_t collected = tokenize(n, tid, t, tokenizing);
    t += tokenizing + 20 * US;
    model += waited; /* a lock waited for inside the forward pass */
    if (waited)
        span_trace_wait(tid, PI_WAIT_MUTEX, t + model / 4, waited);
    serving_call(tid, n->model, PI_SPAN_MODULE, 1, t, t + model);
    t += model;
    if (slept)
        span_trace_wait(tid, PI_WAIT_SLEEP, t + 5 * US, slept);
    uint64_t end = t + post;
    serving_call(tid, n->pipeline, PI_SPAN_PIPELINE, 0, start, end);
    settle(r, end, tokenizing, model, waited + slept, collected);
    return end;
}

/* @tokens forward passes from @at at @depth, the first the prefill; their time in @model. */
static uint64_t forward_passes(struct request_truth *r, const struct serving_names *n,
                               uint32_t tid, uint64_t at, unsigned depth, uint64_t tokens,
                               uint64_t entry, uint64_t *model)
{
    uint64_t last_end = 0, last_token = 0;
    for (uint64_t i = 0; i < tokens; i++) {
        uint64_t dur = i == 0 ? serving_random(3 * MS, 8 * MS) /* the prefill */
                              : serving_random(500 * US, 1500 * US);
        serving_call(tid, n->lm, PI_SPAN_MODULE, depth, at, at + dur);
        *model += dur;
        /* the token is there at the forward pass's return, or with token checks at the
         * return of the stopping check after it (sampling it first) */
        uint64_t token = at + dur;
        if (serving_token_checks) {
            uint64_t check = token + serving_random(30 * US, 200 * US);
            token = check + serving_random(5 * US, 40 * US);
            serving_call(tid, n->check, PI_SPAN_TOKEN, depth, check, token);
        }
        if (i == 0) {
            serving.prefill_ns += dur;
            r->first_token = token - entry;
            serving.first_tokens[serving.first_token_count++] = r->first_token;
        } else {
            serving.decode_ns += dur;
            cr_assert_lt(serving.gap_count, sizeof(serving.gaps) / sizeof(serving.gaps[0]));
            serving.gaps[serving.gap_count++] = token - last_token;
        }
        last_token = token;
        last_end = serving_token_checks ? token : at + dur;
        at = last_end + serving_random(30 * US, 200 * US); /* the next pass's inputs */
    }
    r->generated = 1;
    r->tokens = tokens;
    serving.tokens += tokens;
    serving.generate_calls++;
    return last_end;
}

uint64_t serving_generate_request(const struct serving_names *n, uint32_t tid, uint64_t start,
                                  int in_pipeline, int wrapped)
{
    struct request_truth *r = new_request(tid, start);
    uint64_t t = start, tokenizing = 0, model = 0;
    unsigned depth = in_pipeline ? 1 : 0;
    if (in_pipeline) {
        tokenizing = serving_random(100 * US, 400 * US);
        tokenize(n, tid, t + 20 * US, tokenizing);
        t += 20 * US + tokenizing + 10 * US;
        /* a model of its own before generate(): the model's time, no token */
        uint64_t check = serving_random(1 * MS, 2 * MS);
        serving_call(tid, n->safety, PI_SPAN_MODULE, 1, t, t + check);
        model += check;
        t += check + 10 * US;
    }
    uint64_t tokens = serving_random(4, 40), entry = t, inner = t + (wrapped ? 40 * US : 0);
    uint64_t last = forward_passes(r, n, tid, inner + serving_random(50 * US, 300 * US),
                                   depth + 1 + (wrapped != 0), tokens, entry, &model);
    uint64_t end = last + serving_random(20 * US, 100 * US);
    if (wrapped) { /* a PEFT model's generate() around its base model's */
        serving_call(tid, n->generate, PI_SPAN_GENERATE, depth + 1, inner, end);
        end += 30 * US;
        serving_call(tid, n->peft_generate, PI_SPAN_GENERATE, depth, entry, end);
    } else {
        serving_call(tid, n->generate, PI_SPAN_GENERATE, depth, entry, end);
    }
    serving.generate_ns += end - entry;
    if (in_pipeline) {
        end += serving_random(100 * US, 500 * US); /* decoding the tokens into text */
        serving_call(tid, n->text_generation, PI_SPAN_PIPELINE, 0, start, end);
    }
    settle(r, end, tokenizing, model, 0, 0);
    return end;
}

uint64_t serving_handle_request(const struct serving_names *n, uint32_t tid, uint64_t start)
{
    struct request_truth *r = new_request(tid, start);
    uint64_t model = serving_random(1 * MS, 9 * MS), at = start + serving_random(50, 400) * US;
    serving_call(tid, n->model, PI_SPAN_MODULE, 1, at, at + model);
    uint64_t end = at + model + serving_random(10, 300) * US;
    serving_call(tid, n->handle, PI_SPAN_NAMED, 0, start, end);
    settle(r, end, 0, model, 0, 0);
    return end;
}

void serving_end(uint64_t at)
{
    struct pi_record r = {PI_REC_PROCESS_END, 0, (uint32_t)getpid(), at, 0, {0, PI_END_EXIT, 0}};
    span_trace_record(&r, at);
}

void serving_idle(uint32_t tid, uint64_t from, uint64_t to)
{
    if (to > from)
        span_trace_wait(tid, PI_WAIT_COND, from, to - from);
}

void serving_idle_collection(const struct serving_names *n, uint32_t tid, uint64_t from,
                             uint64_t to, int between)
{
    serving_call(tid, n->gc, PI_SPAN_GC, 0, from, to);
    serving.gc_between += between ? to - from : 0;
}

size_t serving_sorted(int part, uint64_t *out)
{
    for (size_t i = 0; i < serving.count; i++) {
        const struct request_truth *r = &serving.requests[i];
        out[i] = part == PI_REQUEST_PART_COUNT ? r->end - r->start : r->part[part];
    }
    pi_sort_u64(out, serving.count);
    return serving.count;
}

double serving_median(int part)
{
    static uint64_t sorted[SERVING_REQUESTS_MAX];
    return span_quantile(sorted, serving_sorted(part, sorted), 0.5);
}

size_t serving_slowest(unsigned rank)
{
    static size_t order[SERVING_REQUESTS_MAX];
    for (size_t i = 0; i < serving.count; i++) { /* by duration, the earlier first: insertion */
        size_t k = i;
        uint64_t dur = serving.requests[i].end - serving.requests[i].start;
        for (; k > 0; k--) {
            const struct request_truth *before = &serving.requests[order[k - 1]];
            if (before->end - before->start >= dur)
                break;
            order[k] = order[k - 1];
        }
        order[k] = i;
    }
    return order[rank];
}

int serving_slow_part(size_t i)
{
    int part = -1, inside = -1;
    double most = 0, most_inside = 0;
    for (int k = 0; k < PI_REQUEST_PART_COUNT; k++) {
        double over = (double)serving.requests[i].part[k] - serving_median(k);
        if (over > most) {
            most = over;
            part = k;
        }
        if ((k == PI_REQUEST_WAITING || k == PI_REQUEST_COLLECTING) && over > most_inside) {
            most_inside = over;
            inside = k;
        }
    }
    /* a wait or a collection inside the part that explains half its excess or more */
    return inside >= 0 && most_inside >= most / 2 ? inside : part;
}
