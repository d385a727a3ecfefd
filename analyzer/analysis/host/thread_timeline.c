/* thread_timeline.c - a thread's waits over time in doubling buckets (see thread_timeline.h). */
#include "thread_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "thread_cpu.h"
#include "threads.h"

#define FIRST_BUCKET_NS 10000000u

static uint32_t saturated(uint64_t sum)
{
    return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

/* @values, PI_TIMELINE_BUCKETS rows of @width: each row of the first half the sum of two
 * neighbours, the second half emptied. */
static void merge_neighbours(uint32_t *values, unsigned width)
{
    unsigned half = PI_TIMELINE_BUCKETS / 2;
    for (unsigned b = 0; b < half; b++)
        for (unsigned c = 0; c < width; c++)
            values[b * width + c] = saturated((uint64_t)values[2 * b * width + c] +
                                              values[(2 * b + 1) * width + c]);
    memset(values + half * width, 0, sizeof(*values) * half * width);
}

/* Merge neighbouring buckets: each now covers twice the time. */
static void widen(struct pi_thread_timeline *t)
{
    merge_neighbours(&t->waited_us[0][0], PI_TIME_CPU);
    if (t->cpu) {
        merge_neighbours(t->cpu->cpu_us, 1);
        merge_neighbours(t->cpu->measured_us, 1);
    }
    t->bucket_ns *= 2;
}

/* @thread's timeline, made when new, its buckets wide enough to reach @ts + @dur (or as far as
 * they can): [*at, *end) is that time from the first bucket's start, cut to what they span. */
static struct pi_thread_timeline *reach(struct pi_thread_info *thread, uint64_t start_ns,
                                        uint64_t ts, uint64_t dur, uint64_t *at, uint64_t *end)
{
    struct pi_thread_timeline *t = thread->timeline;
    if (!t) {
        t = thread->timeline = calloc(1, sizeof(*t));
        if (!t)
            return NULL;
        t->start_ns = start_ns;
        t->bucket_ns = FIRST_BUCKET_NS;
    }
    if (ts < t->start_ns) { /* before the header's start: a clock's hair */
        dur = dur > t->start_ns - ts ? dur - (t->start_ns - ts) : 0;
        ts = t->start_ns;
    }
    /* a time past what 128 buckets can span (a broken file's) is cut at the end */
    *at = ts - t->start_ns;
    *end = dur > UINT64_MAX - *at ? UINT64_MAX : *at + dur;
    while (*end / PI_TIMELINE_BUCKETS >= t->bucket_ns &&
           t->bucket_ns <= UINT64_MAX / (2 * PI_TIMELINE_BUCKETS))
        widen(t);
    uint64_t limit = t->bucket_ns * PI_TIMELINE_BUCKETS;
    if (*end > limit)
        *end = limit;
    return t;
}

/* The part of [@at, @end) in the bucket @at falls in, and that bucket in *@bucket. */
static uint64_t bucket_part(const struct pi_thread_timeline *t, uint64_t at, uint64_t end,
                            uint64_t *bucket)
{
    *bucket = at / t->bucket_ns;
    uint64_t bucket_end = (*bucket + 1) * t->bucket_ns;
    return (end < bucket_end ? end : bucket_end) - at;
}

void pi_thread_timeline_add(struct pi_thread_info *thread, uint64_t start_ns, uint64_t ts,
                            uint64_t dur, unsigned time_class)
{
    if (time_class >= PI_TIME_CPU || dur == 0)
        return;
    uint64_t at, end;
    struct pi_thread_timeline *t = reach(thread, start_ns, ts, dur, &at, &end);
    /* spread the wait over the buckets it covers */
    while (t && at < end) { /* at most one pass per bucket */
        uint64_t bucket, part = bucket_part(t, at, end, &bucket);
        t->waited_us[bucket][time_class] =
            saturated(t->waited_us[bucket][time_class] + part / 1000);
        at += part;
    }
}

void pi_thread_timeline_cpu(struct pi_thread_info *thread, uint64_t start_ns,
                            const struct pi_clock_samples *samples)
{
    if (samples->count < 2)
        return;
    uint64_t first = samples->at[0].ns, last = samples->at[samples->count - 1].ns, at, end;
    struct pi_thread_timeline *t = reach(thread, start_ns, first, last - first, &at, &end);
    if (t && !t->cpu)
        t->cpu = calloc(1, sizeof(*t->cpu));
    while (t && t->cpu && at < end) {
        uint64_t bucket, part = bucket_part(t, at, end, &bucket);
        uint64_t from = t->start_ns + at;
        uint64_t before = pi_clock_samples_at(samples, from);
        uint64_t after = pi_clock_samples_at(samples, from + part);
        uint64_t used = after > before ? after - before : 0; /* a broken file's clock */
        t->cpu->cpu_us[bucket] = saturated(t->cpu->cpu_us[bucket] + used / 1000);
        t->cpu->measured_us[bucket] = saturated(t->cpu->measured_us[bucket] + part / 1000);
        at += part;
    }
}

int pi_thread_timeline_drawable(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    return pi_thread_wall_ns(p, t) > 0 && t->events >= 2;
}

void pi_thread_timelines_settle(const struct pi_analysis *a, struct pi_process_info *p)
{
    /* the rows the processes before it take, counted until they fill the page (the first
     * few processes, in a job of many) */
    size_t drawn = 0;
    for (const struct pi_process_info *q = a->processes;
         q < p && drawn < PI_TIMELINE_THREADS_DRAWN; q++)
        for (size_t k = 0; k < q->thread_count; k++)
            drawn += pi_thread_timeline_drawable(q, &q->threads[k]);
    for (size_t k = 0; k < p->thread_count; k++) {
        struct pi_thread_info *t = &p->threads[k];
        if (drawn < PI_TIMELINE_THREADS_DRAWN && pi_thread_timeline_drawable(p, t)) {
            drawn++;
            continue;
        }
        pi_thread_timeline_free(t->timeline);
        t->timeline = NULL;
    }
}

void pi_thread_timeline_free(struct pi_thread_timeline *t)
{
    if (t)
        free(t->cpu);
    free(t);
}
