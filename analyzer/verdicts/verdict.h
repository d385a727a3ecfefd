/*
 * verdict.h - the ranked list of bottlenecks, with the numbers behind
 * each and what to do about it. Text, JSON and HTML reports all print
 * this same list.
 */
#ifndef PI_VERDICT_H
#define PI_VERDICT_H

#include "analysis/model/model.h"
#include "analysis/pass/training_process.h"

struct pi_requests;

#define PI_MAX_FINDINGS 16
#define PI_MAX_EVIDENCE 20

struct pi_evidence {
    const char *name;
    double value;
    const char *unit;
};

struct pi_finding {
    const char *kind; /* "input-bound", "lock-bound", ... or "none" */
    double score;     /* share of the time it explains, 0..1 */
    int pid;
    char summary[1536];
    char advice[640];
    /* input-bound: what the data-loader workers did most ("sleeping", "reading files",
     * pi_worker_activity_name), and the user's line that held them; NULL and "" elsewhere */
    const char *cause;
    char line[256];
    struct pi_evidence evidence[PI_MAX_EVIDENCE];
    int evidence_count;
    /* died: the frames its fatal signal found, their names in full for the JSON (the
     * summary's are short); NULL elsewhere */
    const struct pi_call_site *frames;
    /* memory-growth: the call sites of device memory the steady steps allocated and kept */
    const struct pi_site_bytes *sites;
    size_t site_count;
    /* ranks before every pace finding whatever the scores: it ends the job (a steady
     * per-step device leak runs out of memory), the others only slow it; a process that
     * died ranks before what would end the job */
    enum {
        PI_ENDS_JOB_NOT = 0,
        PI_RANKS_FIRST_OF_PACE = 1, /* compiling took most of the job: before the pace findings */
        PI_ENDS_JOB_GROWTH = 2,
        PI_ENDS_JOB_DIED = 3,
        PI_ENDS_JOB_STOPPED = 4, /* stopped from outside: said first, in one line */
        PI_ENDS_JOB_HUNG = 5, /* ranks hung until the job ended: why it was stopped, first */
    } ends_job;
    uint64_t ended_ns; /* died: when, the earliest death first (it often causes the others) */
};

struct pi_site_bytes;

/**
 * pi_verdict - findings, most important first; always at least one
 * (kind "none" when nothing stands out)
 * Return: the number of findings written to @out.
 */
int pi_verdict(const struct pi_analysis *analysis, struct pi_finding *out);

/* pi_finding_evidence - add one number behind @finding (at most PI_MAX_EVIDENCE) */
void pi_finding_evidence(struct pi_finding *finding, const char *name, double value,
                         const char *unit);

/* pi_verdict_deaths - the job's processes that died (verdict_death.c), at most @room
 * findings written to @out: their number */
int pi_verdict_deaths(const struct pi_analysis *analysis, struct pi_finding *out, int room);

/* pi_verdict_compiling - @process compiled much of its time (verdict_compile.c): 1 when
 * written to @out */
int pi_verdict_compiling(const struct pi_process_info *process, struct pi_finding *out);

/* pi_verdict_hang - ranks hung in a collective until the job ended, and the ones that never
 * came to it (verdict_hang.c): 1 when written to @out */
int pi_verdict_hang(const struct pi_analysis *analysis, struct pi_finding *out);

/* pi_verdict_stop - the job stopped from outside (verdict_stop.c): 1 when written to @out */
int pi_verdict_stop(const struct pi_analysis *analysis, struct pi_finding *out);

/* The memory-growth findings of one process (verdict_memory.c): 1 when written to @out. */
int pi_verdict_rss_growth(const struct pi_process_info *process, struct pi_finding *out);
int pi_verdict_device_growth(const struct pi_process_info *process, struct pi_finding *out);

/*
 * The training loop that the time-share rules judge: its steady steps when
 * steps were found, else the span of its kernel launches (a GPU job), else,
 * for a process that serves requests (analysis/host/requests.h), the time
 * inside its requests, else the main thread's life. Shares are of @total_ns.
 */
struct pi_loop {
    const struct pi_process_info *process;
    const struct pi_thread_info *main;
    const char *name;     /* "the training loop", or "the serving loop" (process_words.h) */
    const struct pi_requests *requests; /* the requests it served; NULL: none */
    int over_requests;    /* its time is the time inside its requests, on their threads */
    const char *basis;    /* "steady steps", "the span of its kernel launches",
                           * "the time inside its requests", "the main thread's life" */
    double total_ns;      /* the loop's time */
    double data_wait_ns;  /* waiting for the data loader (through any relay) */
    double data_receive_ns; /* in the data loader's next() but not blocked: receiving batches */
    double sync_ns;       /* blocked in CUDA synchronisation and synchronous copies */
    double gpu_ns;        /* GPU busy in the loop; negative: no GPU durations recorded */
    double launches;      /* kernel launches of the process */
    double steps;         /* steps judged (0 when none were found) */
    double main_wall_ns;  /* the main thread's life */
    double cpu_ns;        /* the main thread on a CPU in the loop, by its clock; negative: unknown */
};

/* pi_verdict_input_bound - the loop waited for its data loader, and why (verdict_input.c) */
int pi_verdict_input_bound(const struct pi_analysis *analysis, const struct pi_loop *loop,
                           struct pi_finding *out);

/* pi_verdict_causes_first - move each finding that another explains (a wait behind its
 * cause) to just after that one, in @findings of @count (verdict_causes.c) */
void pi_verdict_causes_first(struct pi_finding *findings, int count);

/* pi_verdict_straggler - the rank the others wait for (verdict_ranks.c): 1 when written to @out */
int pi_verdict_straggler(const struct pi_analysis *analysis, struct pi_finding *out);

/* pi_loop_of - the loop of @process */
void pi_loop_of(const struct pi_process_info *process, struct pi_loop *loop);

/* The GPU findings (verdict_gpu.c): each writes @out and returns 1, or returns 0. */
int pi_verdict_gpu_bound(const struct pi_analysis *analysis, const struct pi_loop *loop,
                         struct pi_finding *out);
int pi_verdict_sync_bound(const struct pi_loop *loop, struct pi_finding *out);
int pi_verdict_launch_bound(const struct pi_analysis *analysis, const struct pi_loop *loop,
                            struct pi_finding *out);
int pi_verdict_copy_bound(const struct pi_analysis *analysis, const struct pi_loop *loop,
                          struct pi_finding *out);

/* The compute findings (verdict_compute.c). pi_verdict_compute_bound - the loop computed, on
 * its thread or its intra-op threads, at least half its time: 1 when written to @out. */
int pi_verdict_compute_bound(const struct pi_analysis *analysis, const struct pi_loop *loop,
                             struct pi_finding *out);

/* pi_verdict_collections - a serving loop spent much of its time in Python's garbage
 * collection (verdict_gc.c): 1 when written to @out */
int pi_verdict_collections(const struct pi_loop *loop, struct pi_finding *out);

/* pi_verdict_token_overhead - a serving loop's generate() calls spent much of its time
 * outside their forward passes (verdict_tokens.c): 1 when written to @out */
int pi_verdict_token_overhead(const struct pi_loop *loop, struct pi_finding *out);

/* pi_verdict_tokenizer_bound - a serving loop's requests spent much of their time tokenizing
 * (verdict_tokenizer.c): 1 when written to @out */
int pi_verdict_tokenizer_bound(const struct pi_loop *loop, struct pi_finding *out);

/* pi_loop_intra_op_cpu_ns - the CPU time of the loop's intra-op threads (PyTorch's OpenMP or
 * native pool: threads that make no recorded call) within @span_ns; their count in @threads */
double pi_loop_intra_op_cpu_ns(const struct pi_loop *loop, double span_ns, int *threads);

/* pi_loop_computed_ns - the loop's time on a CPU: its thread's, and its waits for its intra-op
 * threads while they computed; negative where its thread's CPU is unknown */
double pi_loop_computed_ns(const struct pi_loop *loop);

/* pi_loop_waited_for_pool_ns - of @unseen_ns, the loop's thread's time over @span_ns neither
 * on a CPU nor in a recorded wait, what it spent blocked while its intra-op threads computed:
 * less its wait for a CPU (where the run delay is known), at most their CPU (@pool_ns, of
 * @threads threads) */
double pi_loop_waited_for_pool_ns(const struct pi_loop *loop, double span_ns, double unseen_ns,
                                  double *pool_ns, int *threads);

/* pi_loop_cpu_wait_share - the share of the sampled span (the process's run) in which the
 * loop's thread was ready to run and waiting for a CPU (the kernel's run delay); negative where
 * the trace has no such samples */
double pi_loop_cpu_wait_share(const struct pi_loop *loop);

/* pi_loop_is_python - whether the loop's process ran Python code (its time was sampled) */
int pi_loop_is_python(const struct pi_analysis *analysis, const struct pi_loop *loop);

/* pi_verdict_speed_up_advice - what to try when the loop's own work sets the pace: for a
 * CPU or a GPU job, training or serving, and no model advice for a program that runs no
 * Python */
const char *pi_verdict_speed_up_advice(const struct pi_analysis *analysis,
                                       const struct pi_loop *loop);

#endif
