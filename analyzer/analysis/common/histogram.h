/*
 * histogram.h - mergeable log-linear latency histograms.
 *
 * The buckets are profinject/histogram_buckets.h's, the recorder's too
 * (summary mode): values below 64 exactly, above, 64 buckets per power of
 * two, so a bucket's midpoint is within 1/128 (0.78%) of any value in it:
 * percentiles carry at most that relative error. Only the range of buckets
 * actually used is allocated,
 * so a histogram of similar values stays small. Two histograms merge by
 * adding counts. In exact mode every value is kept as well and
 * percentiles come from the sorted values (for checking, or --exact).
 */
#ifndef PI_HISTOGRAM_H
#define PI_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "profinject/histogram_buckets.h"

#define PI_HISTOGRAM_SUB_BITS PI_BUCKET_SUB_BITS
#define PI_HISTOGRAM_RELATIVE_ERROR PI_BUCKET_RELATIVE_ERROR

struct pi_histogram {
    uint64_t count;
    uint64_t sum;
    uint64_t min, max;
    uint32_t lo, hi;   /* bucket indices [lo, hi) held in counts */
    uint64_t *counts;
    /* exact mode */
    int exact;
    uint64_t *values;
    size_t value_count, values_capacity;
    int sorted;
};

/* pi_histogram_init - an empty histogram; @exact keeps every value too */
void pi_histogram_init(struct pi_histogram *h, int exact);

void pi_histogram_free(struct pi_histogram *h);

/* pi_histogram_clear - forget every value, keeping the memory for the next ones (a histogram
 * filled and emptied again and again: one call's values at a time) */
void pi_histogram_clear(struct pi_histogram *h);

/* pi_histogram_add - count one value; 0 or -1 when out of memory */
int pi_histogram_add(struct pi_histogram *h, uint64_t value);

/**
 * pi_histogram_add_buckets - count @count values known only by their bucket
 * @index: bucket (profinject/histogram_buckets.h)
 *
 * For summaries, whose values were bucketed in the recorder: sum, min and
 * max come from the summary itself (pi_histogram_add_extent). An exact
 * histogram stops being exact (its percentiles then come from buckets).
 * Return: 0, or -1 when out of memory or @index is out of range.
 */
int pi_histogram_add_buckets(struct pi_histogram *h, uint32_t index, uint64_t count);

/* pi_histogram_add_extent - a summary's sum, min and max, after its buckets */
void pi_histogram_add_extent(struct pi_histogram *h, uint64_t sum, uint64_t min, uint64_t max);

/* pi_histogram_merge - add @from's counts into @into (same exactness) */
int pi_histogram_merge(struct pi_histogram *into, const struct pi_histogram *from);

/**
 * pi_histogram_quantile - the @q quantile (0..1), interpolated between
 * order statistics like numpy's default ("linear") method
 * Return: the value, 0 for an empty histogram.
 */
double pi_histogram_quantile(struct pi_histogram *h, double q);

/* pi_sort_u64 - sort @count values in place, smallest first (exact percentiles, medians) */
void pi_sort_u64(uint64_t *values, size_t count);

/* pi_histogram_mean - average value, 0 when empty */
double pi_histogram_mean(const struct pi_histogram *h);

/* pi_histogram_bucket_of, pi_histogram_bucket_value - index of @value, midpoint of bucket @index */
uint32_t pi_histogram_bucket_of(uint64_t value);
double pi_histogram_bucket_value(uint32_t index);
/* pi_histogram_bucket_low - smallest value in bucket @index */
uint64_t pi_histogram_bucket_low(uint32_t index);

#endif
