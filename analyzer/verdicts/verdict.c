/*
 * verdict.c - rank what held the training back. Each rule measures the
 * share of the training loop's time one cause explains; shares above a
 * threshold become findings, largest first.
 */
#include "verdict.h"
#include "process_words.h"
#include "profinject/verdict_thresholds.h"

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/gpu/gpu_timeline.h"
#include "analysis/host/requests.h"
#include "analysis/host/steps.h"
#include "analysis/host/threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a thread that computes at least this share of its life can hold a lock or the GIL for long */
#define COMPETITOR_CPU_SHARE 0.30

/* A serving process without steps or kernel launches: its loop is the time inside its
 * requests, on whichever threads served them, their CPU by those threads' clocks (read by the
 * recorder over each call) where every request's was read. */
static void requests_loop(struct pi_loop *l, const struct pi_requests *q)
{
    l->over_requests = 1;
    l->basis = "the time inside its requests";
    l->total_ns = (double)q->latency.total_ns;
    l->data_wait_ns = 0;
    l->sync_ns = (double)q->sync_ns;
    l->cpu_ns = q->cpu_calls == q->latency.count ? (double)q->cpu_ns : -1;
}

void pi_loop_of(const struct pi_process_info *p, struct pi_loop *l)
{
    const struct pi_gpu_timeline *t = p->gpu_timeline;
    memset(l, 0, sizeof(*l));
    l->process = p;
    l->name = pi_loop_name(p);
    l->requests = p->requests;
    l->main = pi_main_thread(p);
    l->launches = t ? (double)t->launches : 0;
    l->gpu_ns = t && t->durations ? (double)p->gpu_busy_ns : -1;
    l->main_wall_ns = l->main ? (double)pi_thread_wall_ns(p, l->main) : 0;
    l->cpu_ns = -1;
    if (pi_steps_steady_count(&p->steps) > 1) {
        if (p->steps.steady_cpu_measured)
            l->cpu_ns = (double)p->steps.steady_cpu_ns;
        l->basis = "steady steps";
        l->steps = (double)pi_steps_steady_count(&p->steps);
        l->total_ns = (double)p->steps.steady_total_ns;
        l->data_wait_ns = (double)p->steps.steady_wait_ns;
        l->data_receive_ns = (double)p->steps.steady_receive_ns;
        l->sync_ns = (double)p->steps.steady_sync_ns;
        if (l->gpu_ns >= 0)
            l->gpu_ns = (double)p->steps.steady_gpu_ns;
        return;
    }
    if (l->main) {
        l->data_wait_ns = (double)l->main->time[PI_TIME_DATA_WAIT];
        l->sync_ns = (double)l->main->time[PI_TIME_SYNC];
    }
    if (t && t->launches >= 2 && t->last_launch_ns > t->first_launch_ns) {
        /* a GPU job without steps: the loop is where it launched kernels */
        uint64_t end = t->last_gpu_ns > t->last_launch_ns ? t->last_gpu_ns : t->last_launch_ns;
        l->basis = "the span of its kernel launches";
        l->total_ns = (double)(end - t->first_launch_ns);
    } else if (p->requests && p->requests->latency.total_ns) {
        requests_loop(l, p->requests);
    } else {
        l->basis = "the main thread's life";
        l->total_ns = l->main ? (double)pi_thread_wall_ns(p, l->main) : 0;
        if (l->main)
            l->cpu_ns = (double)pi_thread_cpu_ns(p, l->main);
    }
}

/*
 * A thread that could hold what the main thread waits for: one that
 * computes much of its life. Left out: PyTorch's autograd engine threads
 * (the main thread waits for its own backward pass there, which is the
 * loop's work, not contention), the pin-memory relay (waiting for it is
 * waiting for data) and idle pool threads (they wait, they hold nothing).
 */
static int competitors(const struct pi_process_info *p, double *cpu_ns)
{
    int n = 0;
    *cpu_ns = 0;
    for (size_t i = 0; i < p->thread_count; i++) {
        const struct pi_thread_info *t = &p->threads[i];
        if ((int)t->tid == p->header.pid || strncmp(t->name, "pt_autograd", 11) == 0 ||
            strcmp(t->name, "pt_data_pin") == 0)
            continue;
        double wall = (double)pi_thread_wall_ns(p, t), cpu = (double)pi_thread_cpu_ns(p, t);
        if (wall > 0 && cpu / wall >= COMPETITOR_CPU_SHARE) {
            n++;
            *cpu_ns += cpu;
        }
    }
    return n;
}

/*
 * Lock-bound only for real contention. The main thread's lock_wait class
 * holds every mutex, condition and semaphore wait: the GIL handed back and
 * forth while one thread computes, waits for the autograd engine, and the
 * queue of the pin-memory relay (a data wait in disguise). Those are not
 * locks to fix, so a finding needs another thread busy enough to hold the
 * lock or the GIL for that long.
 */
static int lock_bound(const struct pi_loop *l, struct pi_finding *f)
{
    const struct pi_process_info *p = l->process;
    if (!l->main)
        return 0;
    double wall = l->main_wall_ns;
    double waited = (double)l->main->time[PI_TIME_LOCK_WAIT], busy_ns;
    int busy = competitors(p, &busy_ns);
    if (wall <= 0 || waited / wall < PI_WAIT_BOUND_SHARE || busy == 0 || busy_ns < waited / 2)
        return 0;
    f->kind = "lock-bound";
    f->score = waited / wall;
    f->pid = p->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "the main thread of pid %d spent %.0f%% of its time waiting for locks and the GIL "
             "while %d other thread%s computed %.2f s",
             p->header.pid, 100 * f->score, busy, busy == 1 ? "" : "s", busy_ns / 1e9);
    snprintf(f->advice, sizeof(f->advice),
             "fewer Python threads competing with %s, work moved to processes "
             "(DataLoader workers), shorter critical sections",
             l->name);
    pi_finding_evidence(f, "lock_wait_s", waited / 1e9, "s");
    pi_finding_evidence(f, "wall_s", wall / 1e9, "s");
    pi_finding_evidence(f, "busy_threads", busy, "");
    pi_finding_evidence(f, "busy_threads_cpu_s", busy_ns / 1e9, "s");
    return 1;
}

/* A share of the main thread's wall time spent in file I/O. */
static int file_io_bound(const struct pi_loop *l, struct pi_finding *f)
{
    const struct pi_process_info *p = l->process;
    if (!l->main)
        return 0;
    double wall = l->main_wall_ns, waited = (double)l->main->time[PI_TIME_FILE_IO];
    if (wall <= 0 || waited / wall < PI_WAIT_BOUND_SHARE)
        return 0;
    f->kind = "file-io-bound";
    f->score = waited / wall;
    f->pid = p->header.pid;
    snprintf(f->summary, sizeof(f->summary), "the main thread of pid %d spent %.0f%% of its time in file I/O",
             p->header.pid, 100 * f->score);
    snprintf(f->advice, sizeof(f->advice),
             "load data in DataLoader worker processes (num_workers > 0) so that file reads "
             "overlap with training; faster storage or a cache");
    pi_finding_evidence(f, "waited_s", waited / 1e9, "s");
    pi_finding_evidence(f, "wall_s", wall / 1e9, "s");
    return 1;
}

/* What ended the job first, the earliest death first, then what would end it, then by the
 * share of the time each explains. */
static int by_score(const void *x, const void *y)
{
    const struct pi_finding *a = x, *b = y;
    if (a->ends_job != b->ends_job)
        return a->ends_job > b->ends_job ? -1 : 1;
    if (a->ended_ns != b->ended_ns)
        return a->ended_ns < b->ended_ns ? -1 : 1;
    return a->score > b->score ? -1 : a->score < b->score;
}

/* Where a main thread can be held back that no finding above judged for want of a
 * culprit (lock waits with no busy thread) or that none judges: in words, and the name of
 * its share in the evidence. */
#define FIND_THE_WAKER                                                                            \
    "find what the main thread waits for: the report's time by thread and threads over time "  \
    "show which thread ends its waits and what that thread does meanwhile"
static const struct {
    enum pi_time_class class;
    const char *words, *evidence, *advice;
} held_back[] = {
    {PI_TIME_LOCK_WAIT, "waiting on locks that no busy thread holds", "main_lock_wait_share",
     FIND_THE_WAKER},
    {PI_TIME_SLEEP, "asleep", "main_sleep_share", FIND_THE_WAKER},
    {PI_TIME_OTHER, "blocked in calls no hook sees, or waiting for a CPU", "main_other_share",
     "give the main thread a CPU of its own: fewer busy threads and processes than CPUs "
     "(DataLoader num_workers, OMP_NUM_THREADS, other jobs on the machine); if the machine "
     "was idle, it blocked in a call no hook sees"},
    {PI_TIME_OTHER_IO, "waiting on other descriptors (pipes, sockets, devices)",
     "main_other_io_share", FIND_THE_WAKER},
};

/* The held_back entry with the largest share of the main thread's life, when at least
 * PI_WAIT_BOUND_SHARE; -1 when none is. */
static int main_held_back(const struct pi_loop *l, double *share)
{
    int found = -1;
    *share = 0;
    if (!l || !l->main || l->main_wall_ns <= 0)
        return -1;
    for (int i = 0; i < (int)(sizeof(held_back) / sizeof(held_back[0])); i++) {
        double ns = (double)pi_thread_time_ns(l->process, l->main, held_back[i].class);
        if (held_back[i].class == PI_TIME_OTHER) { /* waiting for its intra-op threads */
            double pool;
            int threads;
            ns -= pi_loop_waited_for_pool_ns(l, l->main_wall_ns, ns, &pool, &threads);
        }
        if (ns / l->main_wall_ns >= PI_WAIT_BOUND_SHARE && ns / l->main_wall_ns > *share) {
            *share = ns / l->main_wall_ns;
            found = i;
        }
    }
    return found;
}

static void nothing_stands_out(const struct pi_analysis *a, const struct pi_loop *l,
                               struct pi_finding *f)
{
    const struct pi_process_info *p = l ? l->process : NULL;
    f->kind = "none";
    double total = l ? l->total_ns : 0;
    double host = total - (l ? l->data_wait_ns + l->sync_ns : 0);
    f->score = total > 0 && host > 0 ? host / total : 0;
    /* what the main thread and its intra-op threads spent on a CPU, where their clocks tell */
    if (l && total > 0 && pi_loop_computed_ns(l) >= 0)
        f->score = pi_loop_computed_ns(l) / total;
    f->pid = p ? p->header.pid : 0;
    double held_share;
    int held = main_held_back(l, &held_share);
    char also[200] = "";
    double cpu_wait = pi_loop_cpu_wait_share(l);
    if (held >= 0)
        snprintf(also, sizeof(also), "; its main thread spent %.0f%% of its life %s",
                 100 * held_share, held_back[held].words);
    if (held >= 0 && held_back[held].class == PI_TIME_OTHER && cpu_wait >= 0)
        snprintf(also + strlen(also), sizeof(also) - strlen(also),
                 " (%.0f%% waiting for a CPU, by the kernel's count)",
                 100 * (cpu_wait < held_share ? cpu_wait : held_share));
    snprintf(f->summary, sizeof(f->summary),
             "no bottleneck stands out: %s of pid %d computed %.0f%% of its time "
             "(%s) and waited for data %.0f%%%s",
             l ? l->name : "the training loop", f->pid, 100 * f->score, l ? l->basis : "no process",
             total > 0 ? 100 * l->data_wait_ns / total : 0.0, also);
    /* a program that runs no Python gets no training advice, whatever held it back */
    snprintf(f->advice, sizeof(f->advice), "%s",
             held >= 0 && pi_loop_is_python(a, l) ? held_back[held].advice
             : l                                  ? pi_verdict_speed_up_advice(a, l)
                                                  : "speed up the program's own work");
    pi_finding_evidence(f, "cpu_share", f->score, "");
    if (held >= 0)
        pi_finding_evidence(f, held_back[held].evidence, held_share, "");
    if (held >= 0 && held_back[held].class == PI_TIME_OTHER) /* which of the two it was */
        pi_finding_evidence(f, "main_cpu_wait_share", cpu_wait, "");
}

int pi_verdict(const struct pi_analysis *a, struct pi_finding *out)
{
    int n = 0;
    memset(out, 0, sizeof(*out) * PI_MAX_FINDINGS);
    const struct pi_process_info *p = pi_training_process(a);
    struct pi_loop loop;
    if (p) {
        pi_loop_of(p, &loop);
        n += pi_verdict_input_bound(a, &loop, &out[n]);
        n += lock_bound(&loop, &out[n]);
        n += file_io_bound(&loop, &out[n]);
        n += pi_verdict_gpu_bound(a, &loop, &out[n]);
        n += pi_verdict_sync_bound(&loop, &out[n]);
        n += pi_verdict_launch_bound(a, &loop, &out[n]);
        n += pi_verdict_copy_bound(a, &loop, &out[n]);
        if (n == 0) /* nothing held the loop back: its own work did */
            n += pi_verdict_compute_bound(a, &loop, &out[n]);
        n += pi_verdict_collections(&loop, &out[n]);
        n += pi_verdict_token_overhead(&loop, &out[n]);
        n += pi_verdict_tokenizer_bound(&loop, &out[n]);
        n += pi_verdict_compiling(p, &out[n]);
    }
    n += pi_verdict_straggler(a, &out[n]);
    n += pi_verdict_hang(a, &out[n]);
    n += pi_verdict_stop(a, &out[n]);
    n += pi_verdict_deaths(a, &out[n], PI_MAX_FINDINGS - 2 - n);
    for (size_t i = 0; i < a->process_count && n + 1 < PI_MAX_FINDINGS; i++) {
        n += pi_verdict_rss_growth(&a->processes[i], &out[n]);
        n += pi_verdict_device_growth(&a->processes[i], &out[n]);
    }
    qsort(out, (size_t)n, sizeof(*out), by_score);
    pi_verdict_causes_first(out, n);
    if (n == 0)
        nothing_stands_out(a, p ? &loop : NULL, &out[n++]);
    return n;
}
