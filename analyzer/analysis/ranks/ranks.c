/* ranks.c - the ranks of a distributed job side by side (see ranks.h). */
#include "ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/host/steps.h"
#include "profinject/rank_identity.h"

/* A straggler is the slowest rank in at least this share of the steps (by
 * chance alone, one of 4 evenly matched ranks on a busy host was the slowest
 * in half of 18 steps)... */
#define STRAGGLER_SHARE 0.75
/* ...by at least this share of a step (and this many ns): less is noise */
#define STRAGGLER_DELAY_SHARE 0.05
#define STRAGGLER_DELAY_MIN_NS 500000.0

/* One step index across the ranks, on the first rank's clock. */
struct pi_rank_step {
    uint32_t ranks;      /* that ran it as a steady step */
    uint32_t slowest;    /* index in ranks[] of the longest own time */
    uint64_t max_own, sum_own;
    uint64_t first_end, last_end;
    uint64_t first_release, last_release; /* 0: no lock wait */
};

const char *pi_straggler_cause_name(enum pi_straggler_cause cause)
{
    return cause == PI_STRAGGLER_INPUT ? "input" : cause == PI_STRAGGLER_GPU ? "GPU" : "CPU";
}

void pi_ranks_clock_sync(struct pi_process_info *p, const struct pi_event *ev)
{
    int64_t offset = (int64_t)(ev->rec.arg[1] - ev->rec.arg[0]);
    if (!p->clock_syncs++ || offset < p->clock_offset_min)
        p->clock_offset_min = offset;
    if (p->clock_syncs == 1 || offset > p->clock_offset_max)
        p->clock_offset_max = offset;
    if (ev->dur_ns > p->clock_read_ns)
        p->clock_read_ns = ev->dur_ns;
}

static struct pi_ranks *ranks_for(struct pi_analysis *a, const struct pi_process_info *p,
                                  const char *job)
{
    if (a->ranks)
        return a->ranks;
    struct pi_ranks *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    snprintf(r->job, sizeof(r->job), "%s", job);
    r->world = pi_identity_world(p->identity);
    r->straggler = -1;
    a->ranks = r;
    return r;
}

/* The new rank's summary, or NULL when it belongs elsewhere (another job, a repeat). */
static struct pi_rank_summary *summary_for(struct pi_ranks *r, const struct pi_process_info *p,
                                           const char *job, int exact)
{
    int repeat = 0;
    for (size_t i = 0; i < r->count; i++)
        repeat |= r->ranks[i].rank == p->rank;
    if (repeat || strcmp(job, r->job) != 0) {
        r->other_files++;
        return NULL;
    }
    if (pi_array_room(&r->ranks, &r->capacity, r->count, sizeof(*r->ranks), 16) != 0)
        return NULL;
    struct pi_rank_summary *s = &r->ranks[r->count++];
    memset(s, 0, sizeof(*s));
    s->rank = p->rank;
    s->local_rank = pi_identity_local_rank(p->identity);
    s->pid = p->header.pid;
    snprintf(s->host, sizeof(s->host), "%s", p->host);
    pi_identity_value(p->identity, "boot_id", s->boot, sizeof(s->boot));
    pi_histogram_init(&s->step_ns, exact);
    pi_histogram_init(&s->lock_ns, exact);
    return s;
}

/* What to add to @p's monotonic times to put them on the first rank's clock:
 * nothing on the same boot (one monotonic clock), else the difference of the
 * two hosts' wall-clock offsets. */
static int64_t alignment(struct pi_ranks *r, const struct pi_rank_summary *s,
                         const struct pi_process_info *p)
{
    int64_t offset = (int64_t)(p->header.start_realtime_ns - p->header.start_monotonic_ns);
    /* from the latest rank back, to the first on its boot: the ranks of a host come in a
     * run, so it is one comparison, not one per rank read (5 x 10^7 for 10,000 ranks) */
    int new_boot = 1;
    for (size_t i = r->count - 1; new_boot && i-- > 0;)
        new_boot = strcmp(r->ranks[i].boot, s->boot) != 0 || !s->boot[0];
    r->hosts += new_boot;
    if (r->count == 1) {
        snprintf(r->reference_boot, sizeof(r->reference_boot), "%s", s->boot);
        r->reference_boot_offset_ns = (uint64_t)offset;
        return 0;
    }
    if (s->boot[0] && strcmp(s->boot, r->reference_boot) == 0)
        return 0;
    return offset - (int64_t)r->reference_boot_offset_ns;
}

static struct pi_rank_step *step_entry(struct pi_ranks *r, uint64_t index)
{
    while (index >= r->step_capacity) /* doubled until the index fits */
        if (pi_array_room(&r->steps, &r->step_capacity, r->step_capacity, sizeof(*r->steps),
                          256) != 0)
            return NULL;
    if (index >= r->step_count) {
        memset(&r->steps[r->step_count], 0, (index + 1 - r->step_count) * sizeof(*r->steps));
        r->step_count = index + 1;
    }
    return &r->steps[index];
}

static void spread(uint64_t *first, uint64_t *last, uint64_t at)
{
    if (!*first || at < *first)
        *first = at;
    if (at > *last)
        *last = at;
}

int pi_ranks_add(struct pi_analysis *a, const struct pi_process_info *p)
{
    if (p->rank < 0 || p->steps.count == 0)
        return 0;
    char job[160];
    pi_identity_job(p->identity, job, sizeof(job));
    struct pi_ranks *r = ranks_for(a, p, job);
    struct pi_rank_summary *s = r ? summary_for(r, p, job, a->options.exact) : NULL;
    if (!s)
        return 0;
    int64_t shift = alignment(r, s, p);
    int64_t drift = p->clock_syncs ? p->clock_offset_max - p->clock_offset_min : 0;
    if (drift > r->clock_drift_ns)
        r->clock_drift_ns = drift;
    if (p->clock_read_ns > r->clock_read_ns)
        r->clock_read_ns = p->clock_read_ns;
    s->steps = p->steps.count;
    s->warmup = p->steps.warmup;
    for (uint64_t i = p->steps.warmup; i < p->steps.count; i++) {
        struct pi_step_figures f;
        struct pi_rank_step *e = step_entry(r, i);
        if (!pi_steps_figures(&p->steps, i, &f) || !e)
            continue;
        uint64_t total = f.end - f.start, lock = f.lock < total ? f.lock : total;
        uint64_t own = total - lock;
        pi_histogram_add(&s->step_ns, total);
        pi_histogram_add(&s->lock_ns, lock);
        s->total_ns += total;
        s->lock_total_ns += lock;
        s->data_ns += f.wait;
        /* the host's GPU waits beyond its collectives' kernels: waiting for its own GPU work */
        s->sync_ns += f.sync > f.collective_gpu ? f.sync - f.collective_gpu : 0;
        s->gpu_ns += f.gpu;
        if (!e->ranks++ || own > e->max_own) {
            e->max_own = own;
            e->slowest = (uint32_t)(r->count - 1);
        }
        e->sum_own += own;
        spread(&e->first_end, &e->last_end, (uint64_t)((int64_t)f.end + shift));
        if (f.release)
            spread(&e->first_release, &e->last_release, (uint64_t)((int64_t)f.release + shift));
    }
    return 1;
}

/* Per steady step, a rank's mean time in @part: CPU (own time less its waits for data and GPU),
 * input, GPU. */
static double per_step(const struct pi_rank_summary *s, enum pi_straggler_cause part)
{
    uint64_t n = s->steps - s->warmup;
    if (!n)
        return 0;
    double own = (double)(s->total_ns - s->lock_total_ns);
    double value = part == PI_STRAGGLER_INPUT ? (double)s->data_ns
                   : part == PI_STRAGGLER_GPU ? (double)s->sync_ns
                                              : own - (double)s->data_ns - (double)s->sync_ns;
    return value / (double)n;
}

/* The part of the straggler's step that most exceeds the other ranks' mean. */
static void find_cause(struct pi_ranks *r)
{
    r->cause_ns = -1e300;
    for (int part = PI_STRAGGLER_CPU; part <= PI_STRAGGLER_GPU; part++) {
        double others = 0;
        for (size_t i = 0; i < r->count; i++)
            if (i != r->straggler_index)
                others += per_step(&r->ranks[i], part);
        others /= (double)(r->count - 1);
        double excess = per_step(&r->ranks[r->straggler_index], part) - others;
        if (excess > r->cause_ns) {
            r->cause_ns = excess;
            r->cause = part;
        }
    }
}

static void find_straggler(struct pi_ranks *r, int exact)
{
    size_t candidate = 0;
    for (size_t i = 1; i < r->count; i++)
        if (r->ranks[i].slowest > r->ranks[candidate].slowest)
            candidate = i;
    if (r->steady_steps < 3 ||
        (double)r->ranks[candidate].slowest < STRAGGLER_SHARE * (double)r->steady_steps)
        return;
    struct pi_histogram steps;
    pi_histogram_init(&steps, exact);
    for (size_t i = 0; i < r->count; i++)
        pi_histogram_merge(&steps, &r->ranks[i].step_ns);
    double step = pi_histogram_quantile(&steps, 0.5);
    pi_histogram_free(&steps);
    for (size_t i = 0; i < r->step_count; i++) {
        const struct pi_rank_step *e = &r->steps[i];
        if (e->ranks != r->count || e->slowest != candidate)
            continue;
        double others = (double)(e->sum_own - e->max_own) / (double)(e->ranks - 1);
        pi_histogram_add(&r->delay_ns, (uint64_t)((double)e->max_own - others));
    }
    double delay = pi_histogram_quantile(&r->delay_ns, 0.5);
    if (delay < STRAGGLER_DELAY_SHARE * step || delay < STRAGGLER_DELAY_MIN_NS)
        return;
    r->straggler = r->ranks[candidate].rank;
    r->straggler_index = candidate;
    find_cause(r);
}

/* The median over the other ranks of each one's median lock wait per step. */
static double others_wait(struct pi_ranks *r)
{
    uint64_t *waits = calloc(r->count, sizeof(*waits));
    size_t n = 0;
    for (size_t i = 0; waits && i < r->count; i++)
        if (i != r->straggler_index || r->straggler < 0)
            waits[n++] = (uint64_t)(pi_histogram_quantile(&r->ranks[i].lock_ns, 0.5) + 0.5);
    pi_sort_u64(waits, n);
    double median = n ? (n % 2 ? (double)waits[n / 2]
                               : ((double)waits[n / 2 - 1] + (double)waits[n / 2]) / 2)
                      : 0;
    free(waits);
    return median;
}

void pi_ranks_finish(struct pi_analysis *a)
{
    struct pi_ranks *r = a->ranks;
    if (!r)
        return;
    if (r->count < 2) { /* one rank is no cross-rank view */
        pi_ranks_free(a);
        return;
    }
    pi_histogram_init(&r->delay_ns, a->options.exact);
    pi_histogram_init(&r->end_skew_ns, a->options.exact);
    pi_histogram_init(&r->release_skew_ns, a->options.exact);
    for (size_t i = 0; i < r->step_count; i++) {
        const struct pi_rank_step *e = &r->steps[i];
        if (e->ranks != r->count)
            continue;
        r->steady_steps++;
        r->ranks[e->slowest].slowest++;
        pi_histogram_add(&r->end_skew_ns, e->last_end - e->first_end);
        if (e->first_release)
            pi_histogram_add(&r->release_skew_ns, e->last_release - e->first_release);
    }
    find_straggler(r, a->options.exact);
    r->others_wait_ns = others_wait(r);
}

void pi_ranks_free(struct pi_analysis *a)
{
    struct pi_ranks *r = a->ranks;
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        pi_histogram_free(&r->ranks[i].step_ns);
        pi_histogram_free(&r->ranks[i].lock_ns);
    }
    pi_histogram_free(&r->delay_ns);
    pi_histogram_free(&r->end_skew_ns);
    pi_histogram_free(&r->release_skew_ns);
    free(r->ranks);
    free(r->steps);
    free(r);
    a->ranks = NULL;
}
