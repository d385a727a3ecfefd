/*
 * saturate.h - doubles to integers without undefined behaviour: a damaged
 * clock record can make a tick rate, and so any converted time, absurd.
 */
#ifndef PI_SATURATE_H
#define PI_SATURATE_H

#include <stdint.h>

/* A double to an integer, saturating: a damaged clock record can make
 * the rate absurd, and an out-of-range conversion is undefined. */
static inline int64_t saturate_i64(double x)
{
    if (!(x == x))
        return 0;
    if (x >= 9.2e18)
        return INT64_MAX;
    if (x <= -9.2e18)
        return INT64_MIN;
    return (int64_t)x;
}

static inline uint64_t saturate_u64(double x)
{
    if (!(x > 0))
        return 0;
    return x >= 1.8e19 ? UINT64_MAX : (uint64_t)x;
}

#endif
