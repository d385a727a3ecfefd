/*
 * verdict_input.c - input-bound: the training loop waited for its data
 * loader. The wait is the symptom; the finding says its cause from the
 * workers' own side: what their main threads did with their time (read
 * files, computed, slept, waited on locks, sat idle for an index), the
 * line of the user's code that held them, and how many workers would keep
 * up with the loop at its own pace.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/host/worker_time.h"
#include "profinject/verdict_thresholds.h"
#include "analysis/sites/call_sites.h"
#include "analysis/sites/python_lines.h"
#include "verdict.h"

/* Waiting for data is the one wait that needs no competitor to be real:
 * 15% of the step time is worth acting on, and a busy machine that slows
 * the loop's own compute must not hide a starved loader. */

static double file_read_p50_ms(const struct pi_analysis *a)
{
    struct pi_latency_entry *e =
        pi_latency_get((struct pi_latency_table *)&a->calls, "io", "read", "file");
    return e && e->durations.count ? pi_histogram_quantile(&e->durations, 0.5) / 1e6 : 0.0;
}

/* What a line weighs: its sampled wall time, or its main thread's CPU time in those samples. */
static uint64_t line_weight(const struct pi_python_line *line, int by_cpu)
{
    return by_cpu ? line->cpu_ns : line->ns;
}

/* The user's line that held the workers longest, over all of them: written to @out as
 * "file:line in function"; its share of their sampled time, 0 when none. @by_cpu: weigh by
 * the workers' CPU time, not their wall time: for workers that compute, time they waited
 * for a CPU goes to whichever line they were preempted at (a system call's return, on a
 * busy machine), not to the one that computes. */
static double workers_line(const struct pi_analysis *a, const struct pi_process_info *parent,
                           int by_cpu, char *out, size_t size)
{
    const struct pi_python_line *best = NULL;
    uint64_t best_ns = 0, sampled = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *q = &a->processes[i];
        if (!pi_is_worker_of(q, parent) || !q->python_lines)
            continue;
        sampled += by_cpu ? q->python_lines->sampled_cpu_ns : q->python_lines->sampled_ns;
        for (size_t k = 0; k < q->python_lines->count; k++) {
            const struct pi_python_line *line = &q->python_lines->lines[k];
            uint64_t ns = 0; /* the same line in every worker */
            for (size_t j = i; j < a->process_count; j++) {
                const struct pi_process_info *r = &a->processes[j];
                if (!pi_is_worker_of(r, parent) || !r->python_lines)
                    continue;
                for (size_t m = 0; m < r->python_lines->count; m++) {
                    const struct pi_python_line *x = &r->python_lines->lines[m];
                    if (x->line == line->line && strcmp(x->file, line->file) == 0 &&
                        strcmp(x->function, line->function) == 0)
                        ns += line_weight(x, by_cpu);
                }
            }
            if (ns > best_ns) {
                best_ns = ns;
                best = line;
            }
        }
    }
    if (!best || !sampled)
        return 0;
    snprintf(out, size, "%s:%u in %s", pi_call_site_short_file(best->file), best->line,
             best->function);
    return (double)best_ns / (double)sampled;
}

/* Whether the workers' samples measured their CPU time (traces of format 10 on; not a
 * first span), for most of their sampled time. */
static int workers_cpu_sampled(const struct pi_analysis *a, const struct pi_process_info *parent)
{
    uint64_t known = 0, unknown = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *q = &a->processes[i];
        if (pi_is_worker_of(q, parent) && q->python_lines) {
            known += q->python_lines->sampled_ns - q->python_lines->cpu_unknown_ns;
            unknown += q->python_lines->cpu_unknown_ns;
        }
    }
    return known > unknown;
}

/*
 * The busy activity with the largest share of the workers' time. Their time
 * neither in a wait nor on a CPU counts with computing: a worker's waits are
 * hooked (files, pipes, locks, sleeps), so the rest is mostly work that was
 * ready to run and waited for a CPU. Workers idle more than busy are not the
 * limit: the cause is idle, and the wait lies between them and the loop.
 */
static enum pi_worker_activity dominant(const struct pi_worker_time *w)
{
    enum pi_worker_activity best = PI_WORKER_COMPUTING;
    uint64_t best_ns = w->ns[PI_WORKER_COMPUTING] + w->ns[PI_WORKER_OTHER];
    for (int i = 0; i < PI_WORKER_OTHER; i++)
        if (i != PI_WORKER_IDLE && i != PI_WORKER_COMPUTING && w->ns[i] > best_ns) {
            best_ns = w->ns[i];
            best = (enum pi_worker_activity)i;
        }
    return w->ns[PI_WORKER_IDLE] > pi_worker_busy_ns(w) ? PI_WORKER_IDLE : best;
}

/* The advice that follows the workers' main cause; @needed: workers that would keep up. */
static void advise(struct pi_finding *f, enum pi_worker_activity cause, const char *line,
                   double needed, size_t workers, int cpu_starved)
{
    char more[160] = "";
    if (needed > (double)workers)
        snprintf(more, sizeof(more), "num_workers=%.0f (now %zu) would keep up with the loop; ",
                 needed, workers);
    const char *where = line[0] ? line : "the dataset's __getitem__";
    switch (cause) {
    case PI_WORKER_READING:
        snprintf(f->advice, sizeof(f->advice),
                 "%sthe workers wait on storage at %s: cache the dataset in memory or on local "
                 "disk, read fewer and larger files (a packed format: WebDataset, LMDB, HDF5), "
                 "or faster storage",
                 more, where);
        break;
    case PI_WORKER_COMPUTING:
        snprintf(f->advice, sizeof(f->advice),
                 "%sthe workers compute at %s: cheaper transforms and decoding (do them once "
                 "offline, or on the GPU), or more workers while CPUs are free%s",
                 more, where,
                 cpu_starved ? " (they also waited for a CPU: more workers than free CPUs "
                               "would not help)"
                             : "");
        break;
    case PI_WORKER_SLEEPING:
        snprintf(f->advice, sizeof(f->advice),
                 "%sthe workers sleep at %s: remove the sleep, or if it stands for a wait "
                 "(a rate limit, a remote service), overlap it with more workers or threads",
                 more, where);
        break;
    case PI_WORKER_WAITING:
        snprintf(f->advice, sizeof(f->advice),
                 "%sthe workers wait on locks or semaphores at %s: shared state between them "
                 "(a lock around a reader, a multiprocessing.Manager); give each worker its own",
                 more, where);
        break;
    case PI_WORKER_IDLE:
        snprintf(f->advice, sizeof(f->advice),
                 "the workers were idle most of the time, waiting for indexes: they keep up, and "
                 "the loop waits for the hand-over: large batches through shared memory and "
                 "pickling (smaller or fewer tensors per batch), the pin-memory thread, a "
                 "prefetch_factor too small for uneven samples");
        break;
    default: /* other counts with computing: not a cause dominant() names */
        break;
    }
}

int pi_verdict_input_bound(const struct pi_analysis *a, const struct pi_loop *l,
                           struct pi_finding *f)
{
    const struct pi_process_info *p = l->process;
    /* the time it takes the loop to get a batch: blocked until it comes, and in next() after
     * that, receiving it (unpickling, rebuilding its tensors), which is input too */
    double waited = l->data_wait_ns, received = l->data_receive_ns, total = l->total_ns;
    if (total <= 0 || (waited + received) / total < PI_INPUT_BOUND_SHARE)
        return 0;
    f->kind = "input-bound";
    f->score = (waited + received) / total;
    f->pid = p->header.pid;
    int n = snprintf(f->summary, sizeof(f->summary),
                     "%s (pid %d) spent %.0f%% of its step time getting its data "
                     "(%.2f s of %.2f s, %s): waiting for its data-loader workers %.0f%%, "
                     "receiving the batches %.0f%%",
                     l->name, p->header.pid, 100 * f->score, (waited + received) / 1e9, total / 1e9,
                     l->basis, 100 * waited / total, 100 * received / total);
    snprintf(f->advice, sizeof(f->advice),
             "more DataLoader workers (num_workers; %llu worker processes were started), "
             "persistent_workers=True, pin_memory=True, cheaper per-sample loading and decoding, "
             "or faster storage / a cache for the dataset",
             (unsigned long long)p->children);
    pi_finding_evidence(f, "data_wait_s", waited / 1e9, "s");
    pi_finding_evidence(f, "data_receive_s", received / 1e9, "s");
    pi_finding_evidence(f, "step_time_s", total / 1e9, "s");
    pi_finding_evidence(f, "data_share", f->score, "");
    pi_finding_evidence(f, "data_wait_share", waited / total, "");
    pi_finding_evidence(f, "data_receive_share", received / total, "");
    pi_finding_evidence(f, "steps", (double)p->steps.count, "");
    pi_finding_evidence(f, "worker_processes", (double)p->children, "");
    pi_finding_evidence(f, "file_read_p50_ms", file_read_p50_ms(a), "ms");
    struct pi_worker_time w;
    if (!pi_worker_time_of(a, p, &w) || w.wall_ns == 0)
        return 1;
    double share[PI_WORKER_ACTIVITY_COUNT];
    for (int i = 0; i < PI_WORKER_ACTIVITY_COUNT; i++)
        share[i] = (double)w.ns[i] / (double)w.wall_ns;
    enum pi_worker_activity cause = dominant(&w);
    f->cause = pi_worker_activity_name(cause);
    int by_cpu = cause == PI_WORKER_COMPUTING && workers_cpu_sampled(a, p);
    double line_share = workers_line(a, p, by_cpu, f->line, sizeof(f->line));
    /* one worker makes a batch at a time: its busy time per batch against the loop's own
     * time per step (not waiting for data) says how many in parallel keep up */
    double batches = (double)p->steps.count;
    double per_batch = batches > 0 ? (double)pi_worker_busy_ns(&w) / batches : 0;
    double own_per_step = l->steps > 0 ? (total - waited) / l->steps : 0;
    double needed = own_per_step > 0 && per_batch > 0 ? ceil(per_batch / own_per_step) : 0;
    if (n > 0 && (size_t)n < sizeof(f->summary))
        n += snprintf(f->summary + n, sizeof(f->summary) - (size_t)n,
                      "; its workers (%zu, %zu at once) were mostly %s: reading files %.0f%%, "
                      "computing %.0f%%, sleeping %.0f%%, waiting on locks/IPC %.0f%%, "
                      "idle %.0f%%, waiting for a CPU or in calls no hook sees %.0f%%",
                      w.workers, w.concurrent, f->cause, 100 * share[PI_WORKER_READING],
                      100 * share[PI_WORKER_COMPUTING], 100 * share[PI_WORKER_SLEEPING],
                      100 * share[PI_WORKER_WAITING], 100 * share[PI_WORKER_IDLE],
                      100 * share[PI_WORKER_OTHER]);
    if (f->line[0] && n > 0 && (size_t)n < sizeof(f->summary))
        n += snprintf(f->summary + n, sizeof(f->summary) - (size_t)n,
                      ", most at %s (%.0f%% of their sampled %s)", f->line, 100 * line_share,
                      by_cpu ? "CPU" : "time");
    if (needed > 0 && n > 0 && (size_t)n < sizeof(f->summary))
        snprintf(f->summary + n, sizeof(f->summary) - (size_t)n,
                 "; a worker takes %.1f ms a batch, the loop %.1f ms a step: %.0f worker%s would "
                 "keep up",
                 per_batch / 1e6, own_per_step / 1e6, needed, needed < 1.5 ? "" : "s");
    advise(f, cause, f->line, needed, w.concurrent,
           w.ns[PI_WORKER_OTHER] > w.ns[PI_WORKER_COMPUTING] / 2);
    pi_finding_evidence(f, "worker_reading_share", share[PI_WORKER_READING], "");
    pi_finding_evidence(f, "worker_computing_share", share[PI_WORKER_COMPUTING], "");
    pi_finding_evidence(f, "worker_sleeping_share", share[PI_WORKER_SLEEPING], "");
    pi_finding_evidence(f, "worker_waiting_share", share[PI_WORKER_WAITING], "");
    pi_finding_evidence(f, "worker_idle_share", share[PI_WORKER_IDLE], "");
    pi_finding_evidence(f, "worker_other_share", share[PI_WORKER_OTHER], "");
    pi_finding_evidence(f, "worker_ms_per_batch", per_batch / 1e6, "ms");
    pi_finding_evidence(f, "loop_ms_per_step", own_per_step / 1e6, "ms");
    pi_finding_evidence(f, "workers_to_keep_up", needed, "");
    pi_finding_evidence(f, "workers_at_once", (double)w.concurrent, "");
    pi_finding_evidence(f, "worker_line_share", line_share, "");
    return 1;
}
