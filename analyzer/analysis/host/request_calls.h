/*
 * request_calls.h - what each thread did inside its outermost marked calls
 * (PI_REC_SPAN at depth 0), as the requests need it (requests.h): the time
 * its tokenizers and its model took inside, the generate() calls inside
 * with their tokens, and its recorded waits.
 *
 * A thread's records come in return order, inner calls before outer ones,
 * and its outermost calls never overlap: every call of depth 1 or more that
 * returns after the thread's last outermost call returned is inside the
 * next outermost call to return. So a thread keeps what came since its last
 * outermost return, and hands it over with that call. Memory: a few
 * hundred bytes a thread and the histograms of one call's tokens, emptied
 * at each outermost return; nothing grows with the number of calls.
 *
 * Inside a call, the model is the outermost nn.Module calls (the recorder
 * marks no other), the tokenizing the tokenizer calls not inside another
 * one. A generate() call's tokens are the module calls directly inside it
 * (one forward pass a token: the first the prefill, the others decode
 * steps); a generate() that another one wraps counts once.
 *
 * Python's garbage collections (PI_SPAN_GC) are no calls of the job: one
 * inside an outermost call is part of it, one outside any is counted
 * towards the thread's next outermost call, with what that thread's
 * previous one was (collections between two requests).
 */
#ifndef PI_REQUEST_CALLS_H
#define PI_REQUEST_CALLS_H

#include <stdint.h>

#include "analysis/model/model.h"

/* The generate() calls inside one outermost call. */
struct pi_request_generates {
    uint64_t calls, tokens; /* tokens: the module calls directly inside them */
    uint64_t total_ns;      /* their time, entry to return */
    uint64_t prefill_ns;    /* their first module call's time */
    uint64_t decode_ns;     /* the other module calls' time */
    uint64_t first_token_ns; /* the first one's time to first token, where first_token_known */
    int first_token_known;
    /* from each one's entry to its first module call's return; between successive module
     * calls' returns inside one (the time per output token) */
    struct pi_histogram first_token, inter_token;
    /* the latest one, held until the next shows whether it was wrapped: its entry and time
     * (a wrapper's once it came), where its first module call returned (0: none) */
    int held;
    uint64_t held_start, held_ns, held_first_end;
};

/* One outermost call, with what its thread did inside it. */
struct pi_request_call {
    uint32_t tid, name; /* name: the string id of the marked function */
    unsigned kind;      /* enum pi_span_kind */
    uint64_t start, end;
    uint64_t tokenizing_ns, model_ns;
    uint64_t waiting_ns, sync_ns; /* its thread's recorded waits inside it; of them, the GPU's */
    uint64_t cpu_ns;              /* its thread's CPU time over it, where cpu_measured */
    int cpu_measured;
    uint64_t gc_ns; /* Python's garbage collections inside it, on its thread */
    /* the collections on its thread outside any marked call since its thread's previous
     * outermost call returned, and that call's name and kind (previous_known: there was one) */
    uint64_t gc_before_ns;
    uint32_t previous_name;
    unsigned previous_kind;
    int previous_known;
    const struct pi_request_generates *generates; /* NULL: none inside */
};

struct pi_request_threads;

/* pi_request_threads_new - no thread followed yet; @exact: every duration kept */
struct pi_request_threads *pi_request_threads_new(int exact);

void pi_request_threads_free(struct pi_request_threads *threads);

/**
 * pi_request_threads_span - a PI_REC_SPAN record, in its thread's order
 * Return: 1 when it was an outermost call, then described in @call until its thread's next
 * record; else 0.
 */
int pi_request_threads_span(struct pi_request_threads *threads, const struct pi_event *ev,
                            struct pi_request_call *call);

/* pi_request_threads_wait - thread @tid waited @dur ns from @ts in a recorded call; @sync:
 * for the GPU */
void pi_request_threads_wait(struct pi_request_threads *threads, uint32_t tid, uint64_t ts,
                             uint64_t dur, int sync);

#endif
