/*
 * series.c - a bounded series grows to its bound, then halves its
 * resolution when full, so a long run keeps its shape in fixed memory; the
 * slope is a least-squares fit.
 */
#include "series.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_CAPACITY 16

/* Room for twice the points (at most PI_SERIES_MAX); 0, or -1 when out of memory. */
static int grow(struct pi_series *s)
{
    uint32_t capacity = s->capacity ? 2 * s->capacity : FIRST_CAPACITY;
    if (capacity > PI_SERIES_MAX)
        capacity = PI_SERIES_MAX;
    uint64_t *block = malloc(2 * (size_t)capacity * sizeof(*block));
    if (!block)
        return -1;
    if (s->count) {
        memcpy(block, s->t, s->count * sizeof(*block));
        memcpy(block + capacity, s->v, s->count * sizeof(*block));
    }
    free(s->t);
    s->t = block;
    s->v = block + capacity;
    s->capacity = capacity;
    return 0;
}

void pi_series_add(struct pi_series *s, uint64_t t, uint64_t v)
{
    if (s->stride == 0)
        s->stride = 1;
    if (++s->pending < s->stride)
        return;
    s->pending = 0;
    if (s->count == s->capacity && (s->capacity == PI_SERIES_MAX || grow(s) != 0)) {
        if (s->count == 0)
            return; /* no memory for a first point */
        /* full (or no memory for more): keep every other point and sample half as often
         * from now on */
        for (uint32_t i = 0; i < s->count / 2; i++) {
            s->t[i] = s->t[2 * i];
            s->v[i] = s->v[2 * i];
        }
        s->count /= 2;
        s->stride *= 2;
    }
    s->t[s->count] = t;
    s->v[s->count] = v;
    s->count++;
}

void pi_series_free(struct pi_series *s)
{
    free(s->t);
    memset(s, 0, sizeof(*s));
}

void pi_fit_add(struct pi_fit *f, double x, double y)
{
    f->n++;
    f->sx += x;
    f->sy += y;
    f->sxx += x * x;
    f->sxy += x * y;
}

double pi_fit_slope(const struct pi_fit *f, double min_points)
{
    double denominator = f->n * f->sxx - f->sx * f->sx;
    return f->n >= min_points && denominator > 0 ? (f->n * f->sxy - f->sx * f->sy) / denominator
                                                 : 0.0;
}

double pi_series_slope(const struct pi_series *s, uint64_t from_ns)
{
    struct pi_fit fit = {0};
    for (uint32_t i = 0; i < s->count; i++)
        if (s->t[i] >= from_ns)
            pi_fit_add(&fit, (double)(s->t[i] - from_ns) / 1e9, (double)s->v[i]);
    return pi_fit_slope(&fit, 2);
}
