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

double pi_series_slope(const struct pi_series *s, uint64_t from_ns)
{
    double n = 0, st = 0, sv = 0, stt = 0, stv = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        if (s->t[i] < from_ns)
            continue;
        double t = (double)(s->t[i] - from_ns) / 1e9, v = (double)s->v[i];
        n++;
        st += t;
        sv += v;
        stt += t * t;
        stv += t * v;
    }
    double denominator = n * stt - st * st;
    return n >= 2 && denominator > 0 ? (n * stv - st * sv) / denominator : 0.0;
}
