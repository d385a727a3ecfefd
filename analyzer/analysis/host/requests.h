/*
 * requests.h - the requests a process served: inference is not training.
 *
 * A process serves requests when it stepped no optimizer and called no
 * backward (no such spans, format 15) and made two outermost calls (depth
 * 0) or more of a pipeline, generate(), a function of the user's own or a
 * model. Its requests are then the outermost calls of one name and kind,
 * chosen by kind (a pipeline before generate() before the user's own
 * before a model), then by the most calls; on whichever threads they ran,
 * each thread's (a thread pool serving requests counts on every thread).
 *
 * What a request's time is made of: tokenizing (the tokenizer calls inside
 * it), the model (the outermost module calls inside it; all of it for a
 * model called on its own) and the rest (decoding and post-processing);
 * apart from those, the time its thread spent in recorded waits inside it
 * (locks, I/O, GPU synchronisation, sleeps), whichever part they fell in.
 * Python's garbage collections on its thread inside it overlap those parts
 * too; the collections on a serving thread between two of its requests
 * are counted apart. For generate(): time to first token, time per output
 * token, tokens per second, and the prefill's share of the model's time
 * (request_calls.h).
 *
 * Memory: while a file is read, a few figures and histograms per candidate
 * (name and kind of outermost calls, at most 64) and per thread; once it is
 * read the chosen requests' percentiles, sums and five slowest requests,
 * a few hundred bytes a process, and nothing for a process that serves no
 * requests, whatever the number of calls.
 */
#ifndef PI_REQUESTS_H
#define PI_REQUESTS_H

#include <stdint.h>

#include "analysis/model/model.h"

/* The percentiles kept: p50, p90, p95, p99, p99.9 and the longest. */
#define PI_REQUEST_QUANTILE_COUNT 6
extern const double pi_request_quantile_levels[PI_REQUEST_QUANTILE_COUNT];
/* Their places in pi_request_quantiles.ns. */
enum { PI_REQUEST_P50, PI_REQUEST_P90, PI_REQUEST_P95, PI_REQUEST_P99, PI_REQUEST_P99_9,
       PI_REQUEST_MAX };

/* What a request's time is made of. The first three add up to it; waiting and collecting
 * overlap them. */
enum pi_request_part {
    PI_REQUEST_TOKENIZING,
    PI_REQUEST_MODEL,
    PI_REQUEST_OTHER, /* decoding and post-processing: neither of the above */
    PI_REQUEST_WAITING,
    PI_REQUEST_COLLECTING, /* Python's garbage collections on its thread */
    PI_REQUEST_PART_COUNT
};

#define PI_REQUEST_SLOWEST 5
/* The threads that served requests kept by their ids, the first so many. */
#define PI_REQUEST_TIDS_KEPT 64

/* One of the slowest requests. */
struct pi_request_slow {
    uint64_t start_ns, dur_ns;
    uint32_t tid;
    uint64_t part_ns[PI_REQUEST_PART_COUNT];
    uint64_t tokens;         /* generated: the module calls inside its generate() calls */
    uint64_t first_token_ns; /* its first generate()'s time to first token, where tokens */
    /* the part that took most longer than the median request's (enum pi_request_part);
     * -1: none did */
    int slow_part;
};

/* The percentiles of a set of durations. */
struct pi_request_quantiles {
    uint64_t count, total_ns;
    double ns[PI_REQUEST_QUANTILE_COUNT];
};

struct pi_request_pass;

struct pi_requests {
    char *name;    /* what the requests are calls of: "TextClassificationPipeline.__call__" */
    unsigned kind; /* enum pi_span_kind: PIPELINE, GENERATE, NAMED or MODULE */
    uint64_t first_start_ns, last_end_ns; /* the first request's entry, the last one's return */
    uint64_t threads;                     /* threads that served them */
    uint32_t tids[PI_REQUEST_TIDS_KEPT];  /* the first of them, by id */
    unsigned tid_count;
    struct pi_request_quantiles latency;  /* count: the requests */
    uint64_t part_ns[PI_REQUEST_PART_COUNT]; /* summed over the requests */
    double part_p50_ns[PI_REQUEST_PART_COUNT]; /* each part of the median request */
    uint64_t sync_ns;             /* of the waits, those for the GPU */
    /* Python's garbage collections on the serving threads between two of their requests
     * (inside them: part_ns[PI_REQUEST_COLLECTING]) */
    uint64_t gc_between_ns;
    uint64_t cpu_ns, cpu_calls;   /* the threads' CPU time over the requests where read */
    struct pi_request_slow slowest[PI_REQUEST_SLOWEST]; /* the slowest first */
    unsigned slowest_count;
    /* the generate() calls inside the requests; calls 0: none */
    struct pi_request_generate {
        uint64_t calls, tokens, total_ns, prefill_ns, decode_ns;
        uint64_t requests;  /* requests with generate() calls inside */
        double tokens_p50;  /* tokens of the median such request */
        struct pi_request_quantiles first_token, inter_token;
    } generate;
    struct pi_request_pass *pass; /* while the file is read; NULL after */
};

/* pi_requests_span - a PI_REC_SPAN record of @process; @exact keeps every duration */
void pi_requests_span(struct pi_process_info *process, const struct pi_event *ev, int exact);

/* pi_requests_wait - a recorded wait of thread @tid of @process, of @time_class (below
 * PI_TIME_CPU) */
void pi_requests_wait(struct pi_process_info *process, uint32_t tid, uint64_t ts, uint64_t dur,
                      unsigned time_class, int exact);

/* pi_requests_finish_file - the file is read: where @process served requests, keep their
 * figures in @process->requests; else it is NULL */
void pi_requests_finish_file(struct pi_process_info *process, const struct pi_reader *reader);

/* pi_requests_served_by - whether thread @tid served requests (known for the first
 * PI_REQUEST_TIDS_KEPT threads) */
int pi_requests_served_by(const struct pi_requests *requests, uint32_t tid);

/* pi_requests_per_s - the requests over the first one's entry to the last one's return */
double pi_requests_per_s(const struct pi_requests *requests);

/* pi_requests_tokens_per_s - generated tokens over the generate() calls' time; 0: none */
double pi_requests_tokens_per_s(const struct pi_requests *requests);

/* pi_requests_prefill_share - the first module call's share of the model's time inside the
 * generate() calls; negative: none */
double pi_requests_prefill_share(const struct pi_requests *requests);

/* pi_requests_outside_model_ns - the time of the generate() calls outside their forward
 * passes (sampling, logits processors, stopping checks, the streamer: the host's work between
 * two tokens); 0: none */
uint64_t pi_requests_outside_model_ns(const struct pi_requests *requests);

/* pi_requests_free - release what @process's requests hold */
void pi_requests_free(struct pi_process_info *process);

#endif
