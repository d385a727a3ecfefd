/*
 * series.c - a bounded series halves its resolution when full, so a long
 * run keeps its shape in fixed memory; the slope is a least-squares fit.
 */
#include "series.h"

void pi_series_add(struct pi_series *s, uint64_t t, uint64_t v)
{
    if (s->stride == 0)
        s->stride = 1;
    if (++s->pending < s->stride)
        return;
    s->pending = 0;
    if (s->count == PI_SERIES_MAX) {
        /* full: keep every other point and sample half as often from now on */
        for (uint32_t i = 0; i < PI_SERIES_MAX / 2; i++) {
            s->t[i] = s->t[2 * i];
            s->v[i] = s->v[2 * i];
        }
        s->count = PI_SERIES_MAX / 2;
        s->stride *= 2;
    }
    s->t[s->count] = t;
    s->v[s->count] = v;
    s->count++;
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
