/* thread_timeline.c - a thread's waits over time in doubling buckets (see thread_timeline.h). */
#include "thread_timeline.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_BUCKET_NS 10000000u

/* Merge neighbouring buckets: each now covers twice the time. */
static void widen(struct pi_thread_timeline *t)
{
    for (unsigned b = 0; b < PI_TIMELINE_BUCKETS / 2; b++)
        for (unsigned c = 0; c < PI_TIME_CPU; c++) {
            uint64_t sum = (uint64_t)t->waited_us[2 * b][c] + t->waited_us[2 * b + 1][c];
            t->waited_us[b][c] = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
        }
    memset(t->waited_us[PI_TIMELINE_BUCKETS / 2], 0,
           sizeof(t->waited_us[0]) * (PI_TIMELINE_BUCKETS / 2));
    t->bucket_ns *= 2;
}

void pi_thread_timeline_add(struct pi_thread_info *thread, uint64_t start_ns, uint64_t ts,
                            uint64_t dur, unsigned time_class)
{
    if (time_class >= PI_TIME_CPU || dur == 0)
        return;
    struct pi_thread_timeline *t = thread->timeline;
    if (!t) {
        t = thread->timeline = calloc(1, sizeof(*t));
        if (!t)
            return;
        t->start_ns = start_ns;
        t->bucket_ns = FIRST_BUCKET_NS;
    }
    if (ts < t->start_ns) { /* before the header's start: a clock's hair */
        dur = dur > t->start_ns - ts ? dur - (t->start_ns - ts) : 0;
        ts = t->start_ns;
    }
    /* a time past what 128 buckets can span (a broken file's) is cut at the end */
    uint64_t at = ts - t->start_ns, end = dur > UINT64_MAX - at ? UINT64_MAX : at + dur;
    while (end / PI_TIMELINE_BUCKETS >= t->bucket_ns &&
           t->bucket_ns <= UINT64_MAX / (2 * PI_TIMELINE_BUCKETS))
        widen(t);
    uint64_t limit = t->bucket_ns * PI_TIMELINE_BUCKETS;
    if (end > limit)
        end = limit;
    /* spread the wait over the buckets it covers */
    while (at < end) { /* at most one pass per bucket */
        uint64_t bucket = at / t->bucket_ns, bucket_end = (bucket + 1) * t->bucket_ns;
        uint64_t part = (end < bucket_end ? end : bucket_end) - at;
        uint64_t sum = t->waited_us[bucket][time_class] + part / 1000;
        t->waited_us[bucket][time_class] = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
        at += part;
    }
}
