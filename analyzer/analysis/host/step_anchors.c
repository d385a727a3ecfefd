/*
 * step_anchors.c - parts summed into the mark that follows them (see
 * step_anchors.h).
 */
#include "step_anchors.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"

/* Parts after the last mark are kept one by one; a source whose marks stop
 * (its thread ended, the next epoch's has not begun) keeps the newer half
 * of at most this many: what is lost belongs to no step yet. */
#define AFTER_PRUNE_AT 65536u

struct pi_anchor {
    uint64_t at;
    uint64_t sums[PI_ANCHOR_SUMS]; /* of the parts since the previous mark; running totals once closed */
};

struct pi_anchor_part {
    uint64_t ts, value;
    enum pi_anchor_sum which;
};

/* The number of marks at or before @ts. */
static size_t marks_up_to(const struct pi_anchors *a, uint64_t ts)
{
    size_t lo = 0, hi = a->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->marks[mid].at <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void pi_anchors_mark(struct pi_anchors *a, uint64_t at)
{
    if (a->totals || pi_array_room(&a->marks, &a->capacity, a->count, sizeof(*a->marks), 256) != 0)
        return;
    /* threads' events come buffer by buffer: a mark may be older than the last */
    size_t i = a->count;
    while (i > 0 && a->marks[i - 1].at > at)
        i--;
    memmove(a->marks + i + 1, a->marks + i, (a->count - i) * sizeof(*a->marks));
    a->marks[i] = (struct pi_anchor){.at = at};
    a->count++;
    if (i + 1 != a->count)
        return;
    size_t kept = 0;
    for (size_t k = 0; k < a->after_count; k++) {
        struct pi_anchor_part part = a->after[k];
        if (part.ts < at)
            a->marks[i].sums[part.which] += part.value;
        else
            a->after[kept++] = part;
    }
    a->after_count = kept;
}

void pi_anchors_add(struct pi_anchors *a, enum pi_anchor_sum which, uint64_t ts, uint64_t value)
{
    if (a->totals || !value)
        return;
    if (a->count && ts < a->marks[a->count - 1].at) {
        a->marks[marks_up_to(a, ts)].sums[which] += value;
        return;
    }
    if (a->after_count >= AFTER_PRUNE_AT) {
        size_t from = a->after_count / 2;
        memmove(a->after, a->after + from, (a->after_count - from) * sizeof(*a->after));
        a->after_count -= from;
    }
    if (pi_array_room(&a->after, &a->after_capacity, a->after_count, sizeof(*a->after), 256) == 0)
        a->after[a->after_count++] = (struct pi_anchor_part){ts, value, which};
}

void pi_anchors_close(struct pi_anchors *a)
{
    if (a->totals)
        return;
    for (size_t i = 1; i < a->count; i++)
        for (int k = 0; k < PI_ANCHOR_SUMS; k++)
            a->marks[i].sums[k] += a->marks[i - 1].sums[k];
    a->totals = 1;
}

/* The running total of @which over the marks up to and including @at. */
static uint64_t total_to(const struct pi_anchors *a, enum pi_anchor_sum which, uint64_t at)
{
    size_t n = marks_up_to(a, at);
    return n ? a->marks[n - 1].sums[which] : 0;
}

uint64_t pi_anchors_between(const struct pi_anchors *a, enum pi_anchor_sum which, uint64_t from,
                            uint64_t to)
{
    if (!a->totals || to <= from)
        return 0;
    return total_to(a, which, to) - total_to(a, which, from);
}

void pi_anchors_free(struct pi_anchors *a)
{
    free(a->marks);
    free(a->after);
    memset(a, 0, sizeof(*a));
}
