/* step_trigger.c - slow steps for summary mode's detail windows (see step_trigger.h). */
#include "step_trigger.h"

#include <stdlib.h>
#include <string.h>

/* The threshold is computed again after this many steps: a sort of up to
 * 1024 values every 32 steps costs the writer little. */
#define RECOMPUTE_EVERY 32

void pi_step_trigger_init(struct pi_step_trigger *t)
{
    memset(t, 0, sizeof(*t));
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The threshold: the p99 of the steps kept (the value below which 99% of
 * them lie), and at least a quarter above their median, because steps that
 * differ by noise alone (1% of them are above the p99 by definition) would
 * spend the windows that the rare slow step should have. */
static uint64_t threshold(const struct pi_step_trigger *t)
{
    static uint64_t sorted[PI_STEP_HISTORY]; /* the writer thread's alone */
    uint32_t n = t->count < PI_STEP_HISTORY ? t->count : PI_STEP_HISTORY;
    memcpy(sorted, t->history, n * sizeof(sorted[0]));
    qsort(sorted, n, sizeof(sorted[0]), compare_u64);
    uint64_t p99 = sorted[(uint64_t)(n - 1) * 99 / 100], median = sorted[(n - 1) / 2];
    return p99 > median + median / 4 ? p99 : median + median / 4;
}

/* A step of @duration ticks ended: slow compared with those before it? */
static int step_ended(struct pi_step_trigger *t, uint64_t duration)
{
    int slow = t->count >= PI_STEP_MIN_HISTORY && duration > t->threshold;
    t->history[t->next] = duration;
    t->next = (t->next + 1) % PI_STEP_HISTORY;
    t->count++;
    if (t->count < PI_STEP_MIN_HISTORY)
        return 0;
    if (t->count == PI_STEP_MIN_HISTORY || ++t->since_threshold >= RECOMPUTE_EVERY) {
        t->threshold = threshold(t);
        t->since_threshold = 0;
    }
    return slow;
}

int pi_step_trigger_record(struct pi_step_trigger *t, unsigned mark, const struct pi_record *r,
                           uint64_t *start, uint64_t *end)
{
    if (mark == PI_STEP_SPAN) {
        *start = r->ts;
        *end = r->ts + r->dur;
        return step_ended(t, r->dur);
    }
    if (mark == PI_STEP_BOUNDARY) {
        uint64_t at = r->ts + r->dur, previous = t->last_boundary;
        t->last_boundary = at;
        if (!previous || at <= previous)
            return 0;
        *start = previous;
        *end = at;
        return step_ended(t, at - previous);
    }
    return 0;
}
