/* histogram.c - log-linear histograms (see histogram.h). */
#include "histogram.h"

#include <stdlib.h>
#include <string.h>

uint32_t pi_histogram_bucket_of(uint64_t value)
{
    return pi_bucket_of(value);
}

uint64_t pi_histogram_bucket_low(uint32_t index)
{
    return pi_bucket_low(index);
}

double pi_histogram_bucket_value(uint32_t index)
{
    return pi_bucket_value(index);
}

void pi_histogram_init(struct pi_histogram *h, int exact)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
    h->exact = exact;
}

void pi_histogram_free(struct pi_histogram *h)
{
    free(h->counts);
    free(h->values);
    pi_histogram_init(h, h->exact);
}

void pi_histogram_clear(struct pi_histogram *h)
{
    if (h->counts)
        memset(h->counts, 0, (h->hi - h->lo) * sizeof(*h->counts));
    h->count = h->sum = h->max = 0;
    h->min = UINT64_MAX;
    h->value_count = 0;
    h->sorted = 0;
}

/* Make bucket @index addressable. */
static int cover(struct pi_histogram *h, uint32_t index)
{
    if (h->counts && index >= h->lo && index < h->hi)
        return 0;
    uint32_t lo = h->counts ? (index < h->lo ? index : h->lo) : index;
    uint32_t hi = h->counts ? (index >= h->hi ? index + 1 : h->hi) : index + 1;
    /* grow with some slack so that neighbours do not realloc one by one */
    if (h->counts) {
        if (lo < h->lo)
            lo = lo > 16 ? lo - 16 : 0;
        if (hi > h->hi)
            hi += 16;
    }
    uint64_t *counts = calloc(hi - lo, sizeof(uint64_t));
    if (!counts)
        return -1;
    if (h->counts) {
        memcpy(counts + (h->lo - lo), h->counts, sizeof(uint64_t) * (h->hi - h->lo));
        free(h->counts);
    }
    h->counts = counts;
    h->lo = lo;
    h->hi = hi;
    return 0;
}

static int keep_value(struct pi_histogram *h, uint64_t value)
{
    if (h->value_count >= h->values_capacity) {
        size_t capacity = h->values_capacity ? h->values_capacity * 2 : 64;
        uint64_t *values = realloc(h->values, capacity * sizeof(uint64_t));
        if (!values)
            return -1;
        h->values = values;
        h->values_capacity = capacity;
    }
    h->values[h->value_count++] = value;
    h->sorted = 0;
    return 0;
}

int pi_histogram_add(struct pi_histogram *h, uint64_t value)
{
    uint32_t index = pi_histogram_bucket_of(value);
    if (__builtin_expect(!h->counts || index < h->lo || index >= h->hi, 0) && cover(h, index) != 0)
        return -1;
    if (h->exact && keep_value(h, value) != 0)
        return -1;
    h->counts[index - h->lo]++;
    h->count++;
    h->sum += value;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
    return 0;
}

int pi_histogram_add_buckets(struct pi_histogram *h, uint32_t index, uint64_t count)
{
    if (index >= PI_BUCKET_COUNT)
        return -1;
    if (count == 0)
        return 0;
    if ((!h->counts || index < h->lo || index >= h->hi) && cover(h, index) != 0)
        return -1;
    h->counts[index - h->lo] += count;
    h->count += count;
    return 0;
}

void pi_histogram_add_extent(struct pi_histogram *h, uint64_t sum, uint64_t min, uint64_t max)
{
    h->sum += sum;
    if (min < h->min)
        h->min = min;
    if (max > h->max)
        h->max = max;
}

int pi_histogram_merge(struct pi_histogram *into, const struct pi_histogram *from)
{
    if (from->count == 0)
        return 0;
    if (cover(into, from->lo) != 0 || cover(into, from->hi - 1) != 0)
        return -1;
    for (uint32_t i = from->lo; i < from->hi; i++)
        into->counts[i - into->lo] += from->counts[i - from->lo];
    if (into->exact)
        for (size_t i = 0; i < from->value_count; i++)
            if (keep_value(into, from->values[i]) != 0)
                return -1;
    into->count += from->count;
    into->sum += from->sum;
    if (from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
    return 0;
}

double pi_histogram_mean(const struct pi_histogram *h)
{
    return h->count ? (double)h->sum / (double)h->count : 0.0;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void pi_sort_u64(uint64_t *values, size_t count)
{
    qsort(values, count, sizeof(*values), compare_u64);
}

/* Value of the @rank-th smallest (0-based) as the histogram knows it. */
static double order_statistic(const struct pi_histogram *h, uint64_t rank)
{
    if (rank == 0)
        return (double)h->min;
    if (rank >= h->count - 1)
        return (double)h->max;
    uint64_t seen = 0;
    for (uint32_t i = h->lo; i < h->hi; i++) {
        seen += h->counts[i - h->lo];
        if (seen > rank) {
            double v = pi_histogram_bucket_value(i);
            /* the midpoint can fall outside what was observed */
            if (v < (double)h->min)
                v = (double)h->min;
            if (v > (double)h->max)
                v = (double)h->max;
            return v;
        }
    }
    return (double)h->max;
}

double pi_histogram_quantile(struct pi_histogram *h, double q)
{
    if (h->count == 0)
        return 0.0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    double position = q * (double)(h->count - 1);
    uint64_t below = (uint64_t)position;
    double fraction = position - (double)below;
    if (h->exact && h->value_count == h->count) {
        if (!h->sorted) {
            pi_sort_u64(h->values, h->value_count);
            h->sorted = 1;
        }
        double a = (double)h->values[below];
        double b = below + 1 < h->count ? (double)h->values[below + 1] : a;
        return a + (b - a) * fraction;
    }
    double a = order_statistic(h, below);
    double b = below + 1 < h->count ? order_statistic(h, below + 1) : a;
    return a + (b - a) * fraction;
}
