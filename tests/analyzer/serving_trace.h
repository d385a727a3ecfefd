/*
 * serving_trace.h - synthetic traces of processes serving requests, for the
 * requests tests: a text-classification pipeline (a tokenizer and the model
 * inside each request), generate() (a forward pass a token, on its own or
 * inside a text-generation pipeline, wrapped or not), a function of the
 * user's own on several threads. The calls are the test's own (span_trace.h)
 * and so is what it knows of each request: its parts, its tokens, the gaps
 * between its tokens, the collections inside it and between requests.
 */
#ifndef PI_SERVING_TRACE_H
#define PI_SERVING_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/host/requests.h"
#include "span_trace.h"

#define SERVING_REQUESTS_MAX 1024

/* Which part of a request the test made slow. */
enum serving_slow { SLOW_NONE, SLOW_TOKENIZING, SLOW_MODEL, SLOW_OTHER, SLOW_WAITING };

/* What the test knows of one request. */
struct request_truth {
    uint32_t tid;
    uint64_t start, end;
    uint64_t part[PI_REQUEST_PART_COUNT];
    int generated;                /* generate() ran inside it */
    uint64_t tokens, first_token; /* then its tokens, and its time to first token */
};

/* What the test knows of every request made since serving_begin. */
struct serving_truth {
    struct request_truth requests[SERVING_REQUESTS_MAX];
    size_t count;
    uint64_t first_tokens[SERVING_REQUESTS_MAX];
    size_t first_token_count;
    uint64_t gaps[65536]; /* between successive tokens' moments */
    size_t gap_count;
    uint64_t generate_calls, tokens, generate_ns, prefill_ns, decode_ns;
    uint64_t gc_between; /* collections outside any call between two requests of a thread */
};

extern struct serving_truth serving;

/* The names the calls are made under (string ids of span_trace_name). */
struct serving_names {
    uint32_t pipeline, text_generation, tokenizer, processor, model, lm, safety, gc;
    uint32_t generate, peft_generate, handle, pretrained, optimizer, backward, check;
};

/* Nonzero: generate() makes a stopping check after each token (PI_SPAN_TOKEN), whose return
 * is the token's moment; else the token is there at its forward pass's return. */
extern int serving_token_checks;

/* serving_begin - a new trace (span_trace_begin), its names in @names, no request made */
void serving_begin(struct serving_names *names);

/* serving_random - a pseudo-random number from @lo to @hi */
uint64_t serving_random(uint64_t lo, uint64_t hi);

/* serving_call - a call of @name of @kind at @depth on @tid; its CPU time 9/10 of it */
void serving_call(uint32_t tid, uint32_t name, unsigned kind, unsigned depth, uint64_t start,
                  uint64_t end);

/* serving_pipeline_request - a text-classification request on @tid from @start, with the
 * part @slow made slow; its end */
uint64_t serving_pipeline_request(const struct serving_names *n, uint32_t tid, uint64_t start,
                                  enum serving_slow slow);

/* serving_generate_request - a generate() request on @tid from @start: generate() itself, or
 * inside a text-generation pipeline (@in_pipeline), wrapped by another generate() (@wrapped);
 * its end */
uint64_t serving_generate_request(const struct serving_names *n, uint32_t tid, uint64_t start,
                                  int in_pipeline, int wrapped);

/* serving_handle_request - a call of the user's own function with the model inside; its end */
uint64_t serving_handle_request(const struct serving_names *n, uint32_t tid, uint64_t start);

/* serving_end - the process ends well at @at (a process without its end record died) */
void serving_end(uint64_t at);

/* serving_idle - @tid waits for its next request from @from to @to (outside any request) */
void serving_idle(uint32_t tid, uint64_t from, uint64_t to);

/* serving_idle_collection - a garbage collection on @tid outside any call from @from to @to;
 * @between: after a request of @tid, before its next */
void serving_idle_collection(const struct serving_names *n, uint32_t tid, uint64_t from,
                             uint64_t to, int between);

/* serving_sorted - the requests' @part (PI_REQUEST_PART_COUNT: their durations), sorted into
 * @out; their count */
size_t serving_sorted(int part, uint64_t *out);

/* serving_median - the median request's @part, as numpy's median */
double serving_median(int part);

/* serving_slowest - the index of the @rank-th slowest request (0: the slowest; the earlier
 * first among equals) */
size_t serving_slowest(unsigned rank);

/* serving_slow_part - the part of request @i most longer than the median request's, -1: none */
int serving_slow_part(size_t i);

#endif
