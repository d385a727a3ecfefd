/*
 * thread_timeline.h - where one thread's time went over the run: its waits
 * by time class in a fixed number of buckets, and for the main thread what
 * its CPU clock's samples say it computed. The buckets start 10 ms wide
 * and double (neighbours merged) whenever an event falls past the last, so
 * a thread costs the same few kilobytes however long the run.
 */
#ifndef PI_THREAD_TIMELINE_H
#define PI_THREAD_TIMELINE_H

#include <stdint.h>

#include "analysis/model/model.h"

#define PI_TIMELINE_BUCKETS 128

struct pi_thread_timeline {
    uint64_t start_ns;  /* the first bucket's start */
    uint64_t bucket_ns; /* each bucket's width */
    /* microseconds of each wait class (PI_TIME_CPU unused: it is what waits leave) */
    uint32_t waited_us[PI_TIMELINE_BUCKETS][PI_TIME_CPU];
    /* the main thread's CPU time by its clock's samples, and the time the samples cover;
     * NULL for other threads (a kilobyte each, times every thread of 256 ranks) */
    struct pi_timeline_cpu {
        uint32_t cpu_us[PI_TIMELINE_BUCKETS];
        uint32_t measured_us[PI_TIMELINE_BUCKETS];
    } *cpu;
};

/* pi_thread_timeline_add - @thread waited @dur ns from @ts in @time_class
 * (below PI_TIME_CPU); the timeline starts at @start_ns, made when new */
void pi_thread_timeline_add(struct pi_thread_info *thread, uint64_t start_ns, uint64_t ts,
                            uint64_t dur, unsigned time_class);

/* pi_thread_timeline_cpu - @thread's CPU time in each bucket, read on the line through its
 * clock's @samples (the main thread's, beside the process samples) where they span it */
void pi_thread_timeline_cpu(struct pi_thread_info *thread, uint64_t start_ns,
                            const struct pi_clock_samples *samples);

/* The page draws the timelines of this many threads: the first, in file order, that
 * pi_thread_timeline_drawable takes. */
#define PI_TIMELINE_THREADS_DRAWN 16

/* pi_thread_timeline_drawable - @t of @p lived and did something: a row on the page, when among
 * the first PI_TIMELINE_THREADS_DRAWN such threads */
int pi_thread_timeline_drawable(const struct pi_process_info *p, const struct pi_thread_info *t);

/**
 * pi_thread_timelines_settle - @p committed after @analysis's processes before it: the
 * timelines of its threads that the page will not draw let go. A thread's are 3 KB: two
 * threads a rank were 6 KB a rank of a many-rank job, of which the page draws 16 threads.
 */
void pi_thread_timelines_settle(const struct pi_analysis *analysis, struct pi_process_info *p);

/* pi_thread_timeline_free - release @timeline (NULL: nothing) */
void pi_thread_timeline_free(struct pi_thread_timeline *timeline);

#endif
