/*
 * step_anchors.h - what happened between marks that are chosen only at the
 * end of a file.
 *
 * The relay's steps (relay_steps.c) are the intervals between a pin-memory
 * thread's receipts, and which threads make up the relay is known only once
 * the file is read. Their GPU time, collective GPU time and the main
 * thread's synchronisation would otherwise have to be kept part by part
 * until then. Instead every receipt of every candidate thread is a mark,
 * and each part is summed into the first mark after it: memory per receipt,
 * not per part. Parts come late (GPU durations arrive after their launch's
 * buffer was written), so a part is placed by its time, not by its arrival.
 */
#ifndef PI_STEP_ANCHORS_H
#define PI_STEP_ANCHORS_H

#include <stddef.h>
#include <stdint.h>

enum pi_anchor_sum { PI_ANCHOR_GPU, PI_ANCHOR_SYNC, PI_ANCHOR_SUMS };

struct pi_anchors {
    struct pi_anchor *marks; /* in time order */
    size_t count, capacity;
    struct pi_anchor_part *after; /* parts after the last mark, waiting for the next one */
    size_t after_count, after_capacity;
    int totals; /* pi_anchors_close turned the sums into running totals */
};

/* pi_anchors_mark - a mark at @at (a receipt's end); parts before it and after the previous belong to it */
void pi_anchors_mark(struct pi_anchors *a, uint64_t at);

/* pi_anchors_add - @value of kind @which at time @ts, summed into the first mark after @ts */
void pi_anchors_add(struct pi_anchors *a, enum pi_anchor_sum which, uint64_t ts, uint64_t value);

/* pi_anchors_close - no more marks or parts: ready for pi_anchors_between */
void pi_anchors_close(struct pi_anchors *a);

/* pi_anchors_between - the @which sum of the parts from mark @from (included) to mark @to (excluded) */
uint64_t pi_anchors_between(const struct pi_anchors *a, enum pi_anchor_sum which, uint64_t from,
                            uint64_t to);

void pi_anchors_free(struct pi_anchors *a);

#endif
