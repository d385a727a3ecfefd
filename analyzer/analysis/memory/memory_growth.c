/*
 * memory_growth.c - does memory keep growing once the job runs steadily?
 *
 * The first steps reserve memory that stays reserved (PyTorch's caching
 * allocator keeps what step 1 needed; imports, model load and CUDA's start
 * come before them): growth over the process's life says nothing. So with
 * steps, the value at each steady step's end is fitted against the step
 * number (bytes per step, least squares); the growth starts at the first
 * steady step from which the value keeps rising. Without steps, the last
 * third of the trace is fitted against time.
 */
#include "analysis/model/model.h"
#include "analysis/host/steps.h"
#include "analysis/gpu/gpu_analysis.h"
#include "memory_growth.h"

/* The value of @s at @t: its last point at or before @t (0 before the first). */
static uint64_t value_at(const struct pi_series *s, uint64_t t)
{
    uint32_t lo = 0, hi = s->count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (s->t[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? s->v[lo - 1] : 0;
}

/* Least squares of the value at the end of steps @from.. against the step number. */
static double fit(const struct pi_series *s, const struct pi_steps *steps, uint64_t from)
{
    struct pi_fit line = {0};
    for (uint64_t i = from; i < steps->count; i++)
        pi_fit_add(&line, (double)i, (double)value_at(s, pi_steps_end_ns(steps, i)));
    return pi_fit_slope(&line, 3);
}

/*
 * Growth per steady step. A leak that starts after warm-up makes a hinge:
 * flat, then rising. The growth starts at the first steady step that rose
 * by half the fitted growth and after which the value kept rising as much;
 * the growth per step is then fitted from there on (the flat part before
 * it would understate it).
 */
static double per_step(const struct pi_series *s, const struct pi_steps *steps, uint64_t *start)
{
    double slope = fit(s, steps, steps->warmup);
    *start = 0;
    uint64_t last = value_at(s, pi_steps_end_ns(steps, steps->count - 1));
    for (uint64_t i = steps->warmup; slope > 0 && i < steps->count; i++) {
        uint64_t before = value_at(s, pi_steps_end_ns(steps, i ? i - 1 : 0));
        uint64_t after = value_at(s, pi_steps_end_ns(steps, i));
        if (i && (double)after - (double)before >= slope / 2 &&
            (double)last - (double)after >= slope / 2 * (double)(steps->count - 1 - i)) {
            *start = i + 1; /* steps are numbered from 1 */
            break;
        }
    }
    /* from the step before the first rise: its end is where the growth began */
    if (*start && steps->count - (*start - 2) >= 3)
        slope = fit(s, steps, *start - 2);
    return slope;
}

/* Bytes per second over the last third of the process's life. */
static double last_third(const struct pi_process_info *p, const struct pi_series *s)
{
    return pi_series_slope(s, p->start_ns + (p->end_ns - p->start_ns) / 3 * 2);
}

/* Enough steady steps to fit a line through: growth is judged by steps. */
static int by_steps(const struct pi_steps *steps)
{
    return steps->count > steps->warmup + 2;
}

void pi_memory_growth_steady_start(struct pi_process_info *p)
{
    const struct pi_steps *steps = &p->steps;
    if (p->gpu && by_steps(steps))
        p->gpu->grown_since_ns = pi_steps_start_ns(steps, steps->warmup);
}

void pi_memory_growth(struct pi_process_info *p)
{
    struct pi_memory_growth *g = &p->growth;
    const struct pi_steps *steps = &p->steps;
    g->by_steps = by_steps(steps);
    if (g->by_steps) {
        g->steady_steps = steps->count - steps->warmup;
        g->rss_bytes_per_step = per_step(&p->rss, steps, &g->rss_start_step);
        g->rss_growing_steps = g->rss_start_step ? steps->count - g->rss_start_step + 1 : 0;
        if (p->gpu)
            g->device_bytes_per_step = per_step(&p->gpu->series, steps, &g->device_start_step);
        g->device_growing_steps = g->device_start_step ? steps->count - g->device_start_step + 1 : 0;
        return;
    }
    g->rss_bytes_per_s = last_third(p, &p->rss);
    if (p->gpu)
        g->device_bytes_per_s = last_third(p, &p->gpu->series);
}
