/*
 * steps.c - the steps of a thread, whoever finds them (batch receipts,
 * NVTX ranges, a relay's hand-overs, read-backs, optimizer steps and
 * backward calls): their start and end, the
 * waits they hold, and the GPU work and lock waits that fall in them.
 *
 * Each step keeps its start, end, waits, GPU time and backward calls (104
 * bytes: steps are few next to events); GPU records arrive out of order with
 * the main thread's, so those past the last finished step wait in a short
 * list. The time of each micro-batch (gradient accumulation: steps from
 * spans) goes to a histogram, once its step is known to be steady: only
 * the micro-batches of the first steps, which may be warm-up, are kept
 * until the end.
 */
#include <stdlib.h>
#include <string.h>

#include "steps.h"
#include "analysis/common/array_room.h"
#include "analysis/host/thread_cpu.h"

struct step {
    uint64_t start, end, wait, sync, gpu;
    uint64_t lock, release; /* the main thread's lock waits; where its longest one ended */
    uint64_t longest_lock;
    uint64_t collective_gpu; /* NCCL kernels' GPU time launched in the step (also in lock) */
    uint64_t cpu; /* the main thread's CPU time in it by its clock; PI_STEP_CPU_UNKNOWN: not read */
    uint64_t receive; /* of its time getting the next batch, not blocked: receiving it */
    uint64_t micro_batches; /* backward calls in it (span_steps.c), 0: not counted */
    uint64_t micro_batches_end; /* where the last of them returned, 0: none */
    uint64_t evaluation; /* 1: it holds an evaluation loop, not a steady step (pi_steps_mark_evaluation) */
};

_Static_assert(sizeof(struct step) == PI_STEP_RECORD_WORDS * sizeof(uint64_t),
               "a step's record is PI_STEP_RECORD_WORDS numbers (partial files)");

/* One micro-batch of a step that may be warm-up: its time, until the warm-up is known. */
struct early_micro_batch {
    uint64_t step; /* its step, from 0 */
    uint64_t ns;
};

/* The most steps an automatic warm-up takes (pi_steps_finish). */
#define AUTOMATIC_WARMUP_MOST 10

/* What a part of a step is: GPU work, a lock wait, a collective's GPU time; for a source
 * that places them by time rather than as it goes (span_steps.c), a wait for the GPU or for
 * data, and a backward call. */
enum part { PART_GPU, PART_LOCK, PART_COLLECTIVE_GPU, PART_SYNC, PART_WAIT, PART_MICRO_BATCH };

/* GPU work, a wait or a backward call that came before its step was finished */
struct pending_part {
    uint64_t ts, dur;
    enum part part;
};

static uint64_t elapsed(uint64_t from, uint64_t to)
{
    return to > from ? to - from : 0; /* 0 for a damaged record that ends before it starts */
}

/* One micro-batch of step @index took @ns: to the histogram where the step is steady
 * whatever the warm-up, else kept until pi_steps_finish knows. */
static void time_micro_batch(struct pi_steps *s, uint64_t index, uint64_t ns)
{
    if (index >= s->warmup_most) {
        pi_histogram_add(&s->micro_batch_ns, ns);
        return;
    }
    if (pi_array_room(&s->early_micro_batches, &s->early_capacity, s->early_count,
                      sizeof(struct early_micro_batch), 64) != 0)
        return;
    ((struct early_micro_batch *)s->early_micro_batches)[s->early_count++] =
        (struct early_micro_batch){index, ns};
}

/*
 * A backward call that returned at @end: one more micro-batch of @step. It
 * took from the step's start (the first) or the previous one's return to
 * its own return. A step's first is timed only once a second one shows
 * gradient accumulation; a step's backward calls come in time order.
 */
static void add_micro_batch(struct pi_steps *s, struct step *step, uint64_t end)
{
    uint64_t from = step->micro_batches ? step->micro_batches_end : step->start;
    uint64_t index = (uint64_t)(step - (struct step *)s->steps);
    step->micro_batches++;
    if (s->warmup_most && step->micro_batches >= 2) {
        if (step->micro_batches == 2)
            time_micro_batch(s, index, elapsed(step->start, step->micro_batches_end));
        time_micro_batch(s, index, elapsed(from, end));
    }
    if (end > step->micro_batches_end)
        step->micro_batches_end = end;
}

/* Add one part to @step, one of @s's. */
static void add_part(struct pi_steps *s, struct step *step, uint64_t ts, uint64_t dur,
                     enum part part)
{
    switch (part) {
    case PART_GPU:
        step->gpu += dur;
        return;
    case PART_SYNC:
        step->sync += dur;
        return;
    case PART_WAIT:
        step->wait += dur;
        return;
    case PART_MICRO_BATCH:
        add_micro_batch(s, step, ts + dur);
        return;
    case PART_LOCK:
    case PART_COLLECTIVE_GPU:
        break;
    }
    step->lock += dur;
    /* an NCCL kernel ends (about) its launch plus its GPU time after being launched */
    if (part == PART_COLLECTIVE_GPU)
        step->collective_gpu += dur;
    if (dur >= step->longest_lock) {
        step->longest_lock = dur;
        step->release = ts + dur;
    }
}

static struct step *grow_steps(struct pi_steps *s)
{
    if (pi_array_room(&s->steps, &s->capacity, s->count, sizeof(struct step), 64) != 0)
        return NULL;
    return &((struct step *)s->steps)[s->count];
}

void pi_steps_record(struct pi_steps *s, uint64_t start, uint64_t end, uint64_t wait,
                     uint64_t sync)
{
    struct step *step = grow_steps(s);
    if (!step)
        return;
    *step = (struct step){start, end, wait, sync, 0, 0, 0, 0, 0, PI_STEP_CPU_UNKNOWN, 0, 0, 0, 0};
    /* GPU work and waits for this step: take what started inside it, keep what is later */
    struct pending_part *pending = s->pending;
    size_t kept = 0;
    for (size_t i = 0; i < s->pending_count; i++) {
        if (pending[i].ts >= start && pending[i].ts < end)
            add_part(s, step, pending[i].ts, pending[i].dur, pending[i].part);
        else if (pending[i].ts >= end)
            pending[kept++] = pending[i];
    }
    s->pending_count = kept;
    s->count++;
}

void pi_steps_merge_light(struct pi_steps *s, const uint64_t *work, double fraction)
{
    if (s->count < 3)
        return;
    struct step *steps = s->steps;
    uint64_t *sorted = malloc(s->count * sizeof(*sorted));
    if (!sorted)
        return;
    memcpy(sorted, work, s->count * sizeof(*sorted));
    pi_sort_u64(sorted, s->count);
    /* the 90th percentile is a whole step even where most marks are extra ones */
    double least = (double)sorted[s->count * 9 / 10] * fraction;
    free(sorted);
    size_t kept = 1;
    for (size_t i = 1; i < s->count; i++) {
        if ((double)work[i] < least) {
            struct step *last = &steps[kept - 1];
            last->end = steps[i].end;
            last->wait += steps[i].wait;
            last->sync += steps[i].sync;
            last->gpu += steps[i].gpu;
            if (steps[i].longest_lock >= last->longest_lock) {
                last->longest_lock = steps[i].longest_lock;
                last->release = steps[i].release;
            }
            last->lock += steps[i].lock;
            last->collective_gpu += steps[i].collective_gpu;
            last->micro_batches += steps[i].micro_batches;
            if (steps[i].micro_batches_end > last->micro_batches_end)
                last->micro_batches_end = steps[i].micro_batches_end;
        } else {
            steps[kept++] = steps[i];
        }
    }
    s->count = kept;
}

/* The finished step that @ts falls in, or NULL (steps are in time order). */
static struct step *step_at(const struct pi_steps *s, uint64_t ts)
{
    struct step *steps = s->steps;
    size_t lo = 0, hi = s->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (steps[mid].end <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->count && ts >= steps[lo].start ? &steps[lo] : NULL;
}

/*
 * Parts past the last finished step wait for their step. A source that has
 * finished none (no NVTX ranges in a job with a DataLoader, or the other
 * way round) would keep every part of the trace, 24 bytes each: 28 MB of a
 * 4 M-event trace, 190 MB of 40 M. Once such a list reaches
 * PENDING_PRUNE_AT parts, its older half goes. What that can cost: the
 * parts of a first step (warm-up, reported apart) that has more than that
 * many before it ends. A source with steps keeps all parts of its open
 * step, however long.
 */
#define PENDING_PRUNE_AT 65536u

static void prune_pending(struct pi_steps *s)
{
    struct pending_part *pending = s->pending;
    size_t from = s->pending_count / 2;
    memmove(pending, pending + from, (s->pending_count - from) * sizeof(*pending));
    s->pending_count -= from;
}

static void add_at(struct pi_steps *s, uint64_t ts, uint64_t dur, enum part part)
{
    struct step *steps = s->steps;
    if (s->count && ts < steps[s->count - 1].end) {
        struct step *step = step_at(s, ts); /* a finished step */
        if (step)
            add_part(s, step, ts, dur, part);
        return;
    }
    if (s->count == 0 && s->pending_count >= PENDING_PRUNE_AT)
        prune_pending(s);
    if (pi_array_room(&s->pending, &s->pending_capacity, s->pending_count,
                      sizeof(struct pending_part), 256) != 0)
        return;
    ((struct pending_part *)s->pending)[s->pending_count++] = (struct pending_part){ts, dur, part};
}

void pi_steps_gpu(struct pi_steps *s, uint64_t ts, uint64_t dur)
{
    add_at(s, ts, dur, PART_GPU);
}

void pi_steps_lock(struct pi_steps *s, uint64_t ts, uint64_t dur)
{
    add_at(s, ts, dur, PART_LOCK);
}

void pi_steps_collective_gpu(struct pi_steps *s, uint64_t ts, uint64_t dur)
{
    add_at(s, ts, dur, PART_COLLECTIVE_GPU);
}

void pi_steps_sync(struct pi_steps *s, uint64_t ts, uint64_t dur)
{
    add_at(s, ts, dur, PART_SYNC);
}

void pi_steps_wait(struct pi_steps *s, uint64_t ts, uint64_t dur)
{
    add_at(s, ts, dur, PART_WAIT);
}

void pi_steps_micro_batch(struct pi_steps *s, uint64_t start, uint64_t end)
{
    add_at(s, start, elapsed(start, end), PART_MICRO_BATCH);
}

void pi_steps_time_micro_batches(struct pi_steps *s, int exact, unsigned warmup_steps)
{
    pi_histogram_init(&s->micro_batch_ns, exact);
    pi_histogram_init(&s->after_micro_batches_ns, exact);
    /* the warm-up is at most the steps asked for, else the automatic warm-up's most */
    s->warmup_most = warmup_steps ? warmup_steps : AUTOMATIC_WARMUP_MOST;
}

double pi_steps_micro_batch_share(const struct pi_steps *s)
{
    return s->split_steps_total_ns
               ? (double)s->micro_batches_total_ns / (double)s->split_steps_total_ns
               : 0;
}

void pi_steps_add_wait(struct pi_steps *s, uint64_t ts, uint64_t dur)
{
    struct step *step = step_at(s, ts);
    if (step)
        step->wait += dur;
}

uint64_t pi_steps_start_ns(const struct pi_steps *s, uint64_t i)
{
    return i < s->count && s->steps ? ((const struct step *)s->steps)[i].start : 0;
}

uint64_t pi_steps_end_ns(const struct pi_steps *s, uint64_t i)
{
    return i < s->count && s->steps ? ((const struct step *)s->steps)[i].end : 0;
}

/* The kept micro-batches of the steps from @first on, but those holding an evaluation loop,
 * go to the histogram. */
static void place_early_micro_batches(struct pi_steps *s, uint64_t first)
{
    const struct early_micro_batch *early = s->early_micro_batches;
    const struct step *steps = s->steps;
    for (size_t i = 0; i < s->early_count; i++)
        if (early[i].step >= first && !(early[i].step < s->count && steps[early[i].step].evaluation))
            pi_histogram_add(&s->micro_batch_ns, early[i].ns);
}

/* The steps from @first on with two micro-batches or more: their time after the last one
 * returned, and their micro-batches' time and their own in all. */
static void time_after_micro_batches(struct pi_steps *s, uint64_t first)
{
    const struct step *steps = s->steps;
    for (uint64_t i = first; i < s->count; i++) {
        if (steps[i].micro_batches < 2 || steps[i].evaluation)
            continue;
        pi_histogram_add(&s->after_micro_batches_ns,
                         elapsed(steps[i].micro_batches_end, steps[i].end));
        s->micro_batches_total_ns += elapsed(steps[i].start, steps[i].micro_batches_end);
        s->split_steps_total_ns += elapsed(steps[i].start, steps[i].end);
    }
}

/* The warm-up is known: the split of the steady steps by their micro-batches, or of all of
 * them where no steady step has two (a run all warm-up). */
static void settle_micro_batches(struct pi_steps *s)
{
    place_early_micro_batches(s, s->warmup);
    time_after_micro_batches(s, s->warmup);
    if (s->after_micro_batches_ns.count == 0) {
        place_early_micro_batches(s, 0);
        time_after_micro_batches(s, 0);
    }
    free(s->early_micro_batches);
    s->early_micro_batches = NULL;
    s->early_count = s->early_capacity = 0;
}

void pi_steps_mark_evaluation(struct pi_steps *s, uint64_t start, uint64_t end)
{
    struct step *steps = s->steps;
    for (uint64_t i = 0; i < s->count; i++)
        if (steps[i].start < end && start < steps[i].end)
            steps[i].evaluation = 1;
}

int pi_steps_steady(const struct pi_steps *s, uint64_t index)
{
    const struct step *steps = s->steps;
    return index >= s->warmup && index < s->count && !(steps && steps[index].evaluation);
}

uint64_t pi_steps_steady_count(const struct pi_steps *s)
{
    return s->count > s->warmup + s->evaluation_steps ? s->count - s->warmup - s->evaluation_steps
                                                      : 0;
}

void pi_steps_finish(struct pi_steps *s, unsigned warmup_steps)
{
    uint64_t warmup = warmup_steps;
    if (warmup == 0 && s->count >= 3) {
        warmup = s->count / 10;
        warmup = warmup < 1                       ? 1
                 : warmup > AUTOMATIC_WARMUP_MOST ? AUTOMATIC_WARMUP_MOST
                                                  : warmup;
    }
    if (warmup > s->count)
        warmup = s->count;
    /* no step is recorded after this: parts still waiting for one never get one (a source
     * that found no steps collects every lock wait of the file there) */
    free(s->pending);
    s->pending = NULL;
    s->pending_count = s->pending_capacity = 0;
    s->warmup = warmup;
    const struct step *steps = s->steps;
    for (uint64_t i = 0; i < s->count; i++) {
        uint64_t total = steps[i].end - steps[i].start;
        if (i < warmup) {
            pi_histogram_add(&s->warmup_ns, total);
            s->warmup_total_ns += total;
            s->warmup_wait_ns += steps[i].wait;
        } else if (steps[i].evaluation) {
            s->evaluation_steps++;
            s->evaluation_steps_ns += total;
        } else {
            pi_histogram_add(&s->steady_ns, total);
            s->steady_total_ns += total;
            s->steady_wait_ns += steps[i].wait;
            s->steady_receive_ns += steps[i].receive;
            s->steady_sync_ns += steps[i].sync;
            s->steady_gpu_ns += steps[i].gpu;
        }
    }
    if (s->warmup_most)
        settle_micro_batches(s);
}

/* The steady steps' time not spent getting data (waiting or receiving) or waiting for the GPU. */
static uint64_t steady_host_ns(const struct pi_steps *s)
{
    uint64_t waited = s->steady_wait_ns + s->steady_receive_ns + s->steady_sync_ns;
    return s->steady_total_ns > waited ? s->steady_total_ns - waited : 0;
}

void pi_steps_measure_cpu(struct pi_steps *s, const struct pi_clock_samples *c)
{
    struct step *steps = s->steps;
    if (!steps || s->count <= s->warmup || c->count < 2)
        return;
    uint64_t cpu = 0;
    int spanned = 1;
    for (uint64_t i = 0; i < s->count; i++) {
        struct step *step = &steps[i];
        if (step->start < c->at[0].ns || step->end > c->at[c->count - 1].ns ||
            step->end < step->start) {
            spanned &= i < s->warmup; /* a step the samples do not span (a window's edge), or a
                                         * damaged one that ends before it starts */
            continue;
        }
        uint64_t from = pi_clock_samples_at(c, step->start), to = pi_clock_samples_at(c, step->end);
        uint64_t used = to > from ? to - from : 0, waited = step->wait + step->receive + step->sync;
        uint64_t host = step->end - step->start > waited ? step->end - step->start - waited : 0;
        step->cpu = used < host ? used : host;
        cpu += pi_steps_steady(s, i) ? used : 0;
    }
    if (!spanned)
        return;
    /* samples 50 ms apart draw a straight line through a step's computing and waiting */
    uint64_t host = steady_host_ns(s);
    s->steady_cpu_ns = cpu < host ? cpu : host;
    s->steady_cpu_measured = 1;
}

uint64_t pi_steps_steady_cpu_ns(const struct pi_steps *s)
{
    return s->steady_cpu_measured ? s->steady_cpu_ns : steady_host_ns(s);
}

uint64_t pi_steps_steady_other_ns(const struct pi_steps *s)
{
    return steady_host_ns(s) - pi_steps_steady_cpu_ns(s); /* a measured CPU time is at most it */
}

void pi_steps_release_figures(struct pi_steps *s)
{
    free(s->steps);
    s->steps = NULL;
    s->capacity = 0;
}

void pi_steps_free(struct pi_steps *s)
{
    pi_histogram_free(&s->steady_ns);
    pi_histogram_free(&s->warmup_ns);
    pi_histogram_free(&s->micro_batch_ns);
    pi_histogram_free(&s->after_micro_batches_ns);
    free(s->steps);
    free(s->pending);
    free(s->wakes);
    free(s->early_micro_batches);
    s->steps = s->pending = s->wakes = s->early_micro_batches = NULL;
}

void pi_steps_receive(struct pi_steps *s, uint64_t ns)
{
    if (s->count && s->steps)
        ((struct step *)s->steps)[s->count - 1].receive += ns;
}

int pi_steps_figures(const struct pi_steps *s, uint64_t index, struct pi_step_figures *out)
{
    if (index >= s->count || !s->steps) /* out of range, or the figures were let go */
        return 0;
    const struct step *step = &((const struct step *)s->steps)[index];
    *out = (struct pi_step_figures){step->start,   step->end,  step->wait,
                                    step->sync,    step->gpu,  step->lock,
                                    step->release, step->collective_gpu, step->cpu,
                                    step->receive, step->micro_batches,
                                    step->micro_batches_end};
    return 1;
}

int pi_steps_span(const struct pi_steps *s, uint64_t index, uint64_t *start, uint64_t *end)
{
    if (index >= s->count || !s->steps) /* out of range, or the figures were let go */
        return 0;
    const struct step *step = &((const struct step *)s->steps)[index];
    *start = step->start;
    *end = step->end;
    return 1;
}
