/*
 * gpu_timeline.c - GPU busy over time and the span of the kernel
 * launches, per process (see gpu_timeline.h). GPU durations arrive out of
 * order with the host's records, but never before the process started:
 * bucket 0 starts at the process's first event.
 */
#include "gpu_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/model/model.h"

#define FIRST_BUCKET_NS 1000000u /* 1 ms; doubled as needed */

static struct pi_gpu_timeline *timeline_of(struct pi_process_info *p)
{
    if (!p->gpu_timeline) {
        p->gpu_timeline = calloc(1, sizeof(*p->gpu_timeline));
        if (!p->gpu_timeline)
            return NULL;
        p->gpu_timeline->origin_ns = p->start_ns;
        p->gpu_timeline->bucket_ns = FIRST_BUCKET_NS;
        p->gpu_timeline->first_gpu_ns = p->gpu_timeline->first_launch_ns = UINT64_MAX;
    }
    return p->gpu_timeline;
}

/* Twice as wide buckets: neighbours merge, the second half becomes free. */
static void widen(struct pi_gpu_timeline *t)
{
    for (unsigned i = 0; i < PI_GPU_BUCKETS / 2; i++)
        t->busy[i] = t->busy[2 * i] + t->busy[2 * i + 1];
    memset(t->busy + PI_GPU_BUCKETS / 2, 0, sizeof(t->busy) / 2);
    t->bucket_ns *= 2;
}

void pi_gpu_timeline_work(struct pi_process_info *p, uint64_t ts, uint64_t dur)
{
    struct pi_gpu_timeline *t = timeline_of(p);
    if (!t)
        return;
    if (ts < t->origin_ns) { /* before the first event read so far: clip */
        dur = ts + dur > t->origin_ns ? ts + dur - t->origin_ns : 0;
        ts = t->origin_ns;
    }
    uint64_t end = ts + dur;
    t->durations++;
    if (ts < t->first_gpu_ns)
        t->first_gpu_ns = ts;
    if (end > t->last_gpu_ns)
        t->last_gpu_ns = end;
    while (end - t->origin_ns >= (uint64_t)PI_GPU_BUCKETS * t->bucket_ns && t->bucket_ns < (1ull << 50))
        widen(t);
    /* spread the duration over the buckets it covers */
    for (uint64_t at = ts; at < end;) {
        uint64_t i = (at - t->origin_ns) / t->bucket_ns;
        if (i >= PI_GPU_BUCKETS)
            break;
        uint64_t bucket_end = t->origin_ns + (i + 1) * t->bucket_ns;
        uint64_t part_end = end < bucket_end ? end : bucket_end;
        t->busy[i] += part_end - at;
        at = part_end;
    }
}

void pi_gpu_timeline_launch(struct pi_process_info *p, uint64_t ts, uint64_t dur)
{
    struct pi_gpu_timeline *t = timeline_of(p);
    if (!t)
        return;
    t->launches++;
    if (ts < t->first_launch_ns)
        t->first_launch_ns = ts;
    if (ts + dur > t->last_launch_ns)
        t->last_launch_ns = ts + dur;
}

double pi_gpu_timeline_share(const struct pi_gpu_timeline *t, unsigned i)
{
    if (i >= PI_GPU_BUCKETS || t->bucket_ns == 0)
        return 0;
    double share = (double)t->busy[i] / (double)t->bucket_ns;
    return share > 1 ? 1 : share;
}

unsigned pi_gpu_timeline_buckets(const struct pi_gpu_timeline *t)
{
    if (!t->durations || t->last_gpu_ns <= t->origin_ns)
        return 0;
    uint64_t n = (t->last_gpu_ns - t->origin_ns + t->bucket_ns - 1) / t->bucket_ns;
    return n > PI_GPU_BUCKETS ? PI_GPU_BUCKETS : (unsigned)n;
}

void pi_gpu_timeline_launches(struct pi_process_info *p, uint64_t first_ns, uint64_t end_ns,
                              uint64_t count)
{
    if (!count)
        return;
    pi_gpu_timeline_launch(p, first_ns, end_ns - first_ns);
    p->gpu_timeline->launches += count - 1;
}
