/*
 * series.h - bounded series of (time, value) points for values sampled
 * over a run (RSS, device memory): the memory they take never grows with
 * the length of the run, and a short run's takes only what its points
 * need (every process of a 10,000-rank job has two).
 */
#ifndef PI_SERIES_H
#define PI_SERIES_H

#include <stdint.h>

/* A bounded series of (time, value) points: grown as points come, up to PI_SERIES_MAX,
 * then halves its resolution when full. Zeroed, it is empty. */
#define PI_SERIES_MAX 2048
struct pi_series {
    uint64_t *t, *v;          /* count points of capacity: one block, v inside it; NULL: none */
    uint32_t count, capacity;
    uint32_t stride, pending; /* keep one point in stride */
};

void pi_series_add(struct pi_series *series, uint64_t t, uint64_t v);

/* pi_series_free - @series's points; it is left empty */
void pi_series_free(struct pi_series *series);

/* Least-squares slope of @series (value units per second) over points at or after @from_ns. */
double pi_series_slope(const struct pi_series *series, uint64_t from_ns);

/* A least-squares line, fed one point at a time. */
struct pi_fit {
    double n, sx, sy, sxx, sxy;
};

void pi_fit_add(struct pi_fit *fit, double x, double y);

/* pi_fit_slope - slope of the line through at least @min_points points; 0 otherwise */
double pi_fit_slope(const struct pi_fit *fit, double min_points);

#endif
