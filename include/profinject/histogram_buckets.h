/*
 * histogram_buckets.h - the one bucket rule of profinject's log-linear
 * histograms, shared by the recorder (summary mode counts values into
 * these buckets in the process) and the analyzer (its histograms), so a
 * summary's bucket counts add into the analyzer's histograms unchanged.
 *
 * Values (nanoseconds, bytes) below 64 are counted exactly; above, each
 * power of two is split into 64 equal buckets, so a bucket's midpoint is
 * within 1/128 (0.78%) of any value in it: a percentile read from the
 * buckets carries at most that relative error (PI_BUCKET_RELATIVE_ERROR).
 * The largest index, for values near 2^64, is PI_BUCKET_COUNT - 1 (3775),
 * so an index fits 16 bits.
 */
#ifndef PROFINJECT_HISTOGRAM_BUCKETS_H
#define PROFINJECT_HISTOGRAM_BUCKETS_H

#include <stdint.h>

#define PI_BUCKET_SUB_BITS 6
#define PI_BUCKET_SUB (1u << PI_BUCKET_SUB_BITS)
/* half a bucket's width over its lowest value, at worst: 1/128 */
#define PI_BUCKET_RELATIVE_ERROR (1.0 / (2 << PI_BUCKET_SUB_BITS))
#define PI_BUCKET_COUNT ((64u - PI_BUCKET_SUB_BITS + 1u) * PI_BUCKET_SUB)

/* pi_bucket_of - index of the bucket that counts @value */
static inline uint32_t pi_bucket_of(uint64_t value)
{
    if (value < PI_BUCKET_SUB)
        return (uint32_t)value;
    unsigned exponent = 63u - (unsigned)__builtin_clzll(value);
    unsigned shift = exponent - PI_BUCKET_SUB_BITS;
    return (exponent - PI_BUCKET_SUB_BITS + 1) * PI_BUCKET_SUB +
           (uint32_t)((value >> shift) & (PI_BUCKET_SUB - 1));
}

/* pi_bucket_low - smallest value in bucket @index */
static inline uint64_t pi_bucket_low(uint32_t index)
{
    if (index < PI_BUCKET_SUB)
        return index;
    unsigned octave = index / PI_BUCKET_SUB - 1, sub = index % PI_BUCKET_SUB;
    return (uint64_t)(PI_BUCKET_SUB + sub) << octave;
}

/* pi_bucket_value - the midpoint of bucket @index: what a percentile that falls in it reads */
static inline double pi_bucket_value(uint32_t index)
{
    if (index < PI_BUCKET_SUB)
        return (double)index;
    unsigned octave = index / PI_BUCKET_SUB - 1;
    double width = (double)(1ull << octave);
    return (double)pi_bucket_low(index) + (width - 1) / 2.0;
}

#endif
