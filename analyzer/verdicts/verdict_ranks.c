/*
 * verdict_ranks.c - the straggler of a distributed job: the rank that the
 * others wait for at every step, and which part of its own step made it
 * late (analysis/ranks/ranks.h).
 */
#include <stdio.h>

#include "analysis/ranks/ranks.h"
#include "verdict.h"

static const char *advice_for(enum pi_straggler_cause cause)
{
    switch (cause) {
    case PI_STRAGGLER_INPUT:
        return "give that rank's data loader more workers or a faster path to its shard (a "
               "slower disk, a larger or skewed shard, a remote read)";
    case PI_STRAGGLER_GPU:
        return "check that rank's GPU: another process on it, throttling (clocks, power, "
               "temperature), a slower link, or more work given to it than to the others";
    default:
        return "look at what that rank does on the CPU that the others do not: work only rank "
               "0 does (logging, evaluation, checkpointing), a sleep or busy wait, a busier host "
               "or fewer cores (CPU affinity), or a larger share of the batch";
    }
}

int pi_verdict_straggler(const struct pi_analysis *a, struct pi_finding *f)
{
    struct pi_ranks *r = a->ranks;
    if (!r || r->straggler < 0)
        return 0;
    const struct pi_rank_summary *s = &r->ranks[r->straggler_index];
    double delay = pi_histogram_quantile(&r->delay_ns, 0.5);
    double step = pi_histogram_quantile((struct pi_histogram *)&s->step_ns, 0.5);
    f->kind = "straggler";
    /* the share of every other rank's step spent waiting for it */
    f->score = step > 0 ? delay / step : 0;
    f->pid = s->pid;
    snprintf(f->summary, sizeof(f->summary),
             "rank %ld (pid %d on %s) is the straggler: the slowest of %zu ranks in %llu of %llu "
             "steps, by %.1f ms per step (median); the other ranks wait for it in their "
             "collectives (median %.1f ms per step of %.1f ms); it is late by its own %s time, "
             "%.1f ms per step more than the others'",
             s->rank, s->pid, s->host, r->count, (unsigned long long)s->slowest,
             (unsigned long long)r->steady_steps, delay / 1e6, r->others_wait_ns / 1e6,
             step / 1e6, pi_straggler_cause_name(r->cause), r->cause_ns / 1e6);
    snprintf(f->advice, sizeof(f->advice), "%s", advice_for(r->cause));
    pi_finding_evidence(f, "rank", (double)s->rank, "");
    pi_finding_evidence(f, "delay_per_step_ms", delay / 1e6, "ms");
    pi_finding_evidence(f, "slowest_steps", (double)s->slowest, "");
    pi_finding_evidence(f, "steps", (double)r->steady_steps, "");
    pi_finding_evidence(f, "others_wait_per_step_ms", r->others_wait_ns / 1e6, "ms");
    pi_finding_evidence(f, "step_time_ms", step / 1e6, "ms");
    pi_finding_evidence(f, "cause_excess_ms", r->cause_ns / 1e6, "ms");
    return 1;
}
