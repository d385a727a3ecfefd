/*
 * Unit: GPU work and lock waits wait for their step in a list that stays
 * short. A step source that never finishes a step (a job without NVTX
 * ranges, or without a DataLoader) keeps a bounded list however long the
 * trace; a step finished after many parts still gets every one of them.
 * Steps chosen only once the file is read (the relay's) get their parts
 * through marks, however late a part arrives. A day of the main thread's
 * CPU clock samples is held in bounded memory and still reads the clock.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/host/step_anchors.h"
#include "analysis/host/steps.h"
#include "analysis/host/thread_cpu.h"
#include "analysis/model/model.h"

#define MS 1000000ull

Test(step_parts, a_source_without_steps_keeps_a_bounded_list)
{
    struct pi_steps steps;
    memset(&steps, 0, sizeof(steps));
    size_t most = 0;
    for (uint64_t i = 0; i < 1000000; i++) {
        pi_steps_lock(&steps, 1000 * i, 200);
        pi_steps_gpu(&steps, 1000 * i + 500, 300);
        if (steps.pending_count > most)
            most = steps.pending_count;
    }
    cr_assert_leq(most, 65536, "two million parts, %zu held at once", most);
    pi_steps_free(&steps);
}

Test(step_parts, a_long_step_gets_all_its_parts)
{
    struct pi_steps steps;
    memset(&steps, 0, sizeof(steps));
    /* a first step of 10 ms, then one of 200 ms with 100,000 lock waits and
     * as many kernels before it is finished */
    pi_steps_record(&steps, 0, 10 * MS, 0, 0);
    uint64_t lock = 0, gpu = 0, longest = 0, release = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        uint64_t ts = 10 * MS + 2000 * i, wait = 100 + i % 900;
        pi_steps_lock(&steps, ts, wait);
        pi_steps_gpu(&steps, ts + 1000, 700);
        lock += wait;
        gpu += 700;
        if (wait >= longest) {
            longest = wait;
            release = ts + wait;
        }
    }
    pi_steps_record(&steps, 10 * MS, 210 * MS, 0, 0);
    struct pi_step_figures f;
    cr_assert(pi_steps_figures(&steps, 1, &f));
    cr_assert_eq(f.lock, lock, "lock waits %llu of %llu ns", (unsigned long long)f.lock,
                 (unsigned long long)lock);
    cr_assert_eq(f.gpu, gpu, "GPU time %llu of %llu ns", (unsigned long long)f.gpu,
                 (unsigned long long)gpu);
    cr_assert_eq(f.release, release);
    pi_steps_free(&steps);
}

/* An event of the anchors test: a mark, or a part that arrives after its time. */
struct arrival {
    uint64_t arrives, ts, value;
    int is_mark;
};

static int by_arrival(const void *a, const void *b)
{
    const struct arrival *x = a, *y = b;
    return (x->arrives > y->arrives) - (x->arrives < y->arrives);
}

Test(step_parts, late_parts_reach_the_interval_between_their_marks)
{
    /* a receipt every 10 ms for 2 s; GPU parts every 0.3 ms whose durations
     * arrive up to 60 ms late (CUPTI's buffers), in arrival order */
    enum { MARKS = 200, PARTS = 6600 };
    static struct arrival events[MARKS + PARTS];
    srand(7);
    size_t n = 0;
    for (uint64_t i = 0; i < MARKS; i++)
        events[n++] = (struct arrival){10 * MS * (i + 1), 10 * MS * (i + 1), 0, 1};
    for (uint64_t i = 0; i < PARTS; i++) {
        uint64_t ts = 300000 * i + (uint64_t)(rand() % 1000);
        events[n++] = (struct arrival){ts + (uint64_t)(rand() % 60) * MS, ts,
                                       1000 + (uint64_t)(rand() % 5000), 0};
    }
    qsort(events, n, sizeof(events[0]), by_arrival);
    struct pi_anchors anchors;
    memset(&anchors, 0, sizeof(anchors));
    for (size_t i = 0; i < n; i++) {
        if (events[i].is_mark)
            pi_anchors_mark(&anchors, events[i].ts);
        else
            pi_anchors_add(&anchors, PI_ANCHOR_GPU, events[i].ts, events[i].value);
    }
    pi_anchors_close(&anchors);
    /* the truth: each interval's parts, summed by their times alone */
    for (uint64_t from = 1; from < MARKS; from += 7) {
        uint64_t to = from + 1 + (from % 3), truth = 0;
        for (size_t i = 0; i < n; i++)
            if (!events[i].is_mark && events[i].ts >= 10 * MS * from &&
                events[i].ts < 10 * MS * to)
                truth += events[i].value;
        cr_assert_eq(pi_anchors_between(&anchors, PI_ANCHOR_GPU, 10 * MS * from, 10 * MS * to),
                     truth, "marks %llu to %llu", (unsigned long long)from,
                     (unsigned long long)to);
    }
    pi_anchors_free(&anchors);
}

Test(step_parts, marks_out_of_order_are_kept_in_time_order)
{
    /* two threads' receipts read buffer by buffer: 30, 10, 20 */
    struct pi_anchors anchors;
    memset(&anchors, 0, sizeof(anchors));
    pi_anchors_mark(&anchors, 30 * MS);
    pi_anchors_mark(&anchors, 10 * MS);
    pi_anchors_mark(&anchors, 20 * MS);
    pi_anchors_add(&anchors, PI_ANCHOR_SYNC, 12 * MS, 5);
    pi_anchors_add(&anchors, PI_ANCHOR_SYNC, 25 * MS, 7);
    pi_anchors_add(&anchors, PI_ANCHOR_SYNC, 35 * MS, 11); /* after the last mark: no interval */
    pi_anchors_close(&anchors);
    cr_assert_eq(pi_anchors_between(&anchors, PI_ANCHOR_SYNC, 10 * MS, 20 * MS), 5);
    cr_assert_eq(pi_anchors_between(&anchors, PI_ANCHOR_SYNC, 20 * MS, 30 * MS), 7);
    cr_assert_eq(pi_anchors_between(&anchors, PI_ANCHOR_SYNC, 10 * MS, 30 * MS), 12);
    cr_assert_eq(pi_anchors_between(&anchors, PI_ANCHOR_GPU, 10 * MS, 30 * MS), 0);
    pi_anchors_free(&anchors);
}

Test(step_parts, parts_without_a_later_mark_stay_bounded)
{
    struct pi_anchors anchors;
    memset(&anchors, 0, sizeof(anchors));
    size_t most = 0;
    for (uint64_t i = 0; i < 1000000; i++) {
        pi_anchors_add(&anchors, PI_ANCHOR_GPU, 1000 * i, 300);
        if (anchors.after_count > most)
            most = anchors.after_count;
    }
    cr_assert_leq(most, 65536, "a million parts, %zu held at once", most);
    pi_anchors_free(&anchors);
}

/* The clock of a thread that computes 10 ms of each odd 50 ms and 40 ms of each even one,
 * from 0: what it read at @ns. */
static uint64_t computed_by(uint64_t ns)
{
    uint64_t slot = ns / (50 * MS), in = ns % (50 * MS);
    uint64_t whole = slot / 2 * 50 * MS + (slot % 2 ? 40 * MS : 0);
    uint64_t busy = slot % 2 ? 10 * MS : 40 * MS;
    return whole + (in < busy ? in : busy);
}

Test(step_parts, a_day_of_clock_samples_is_bounded_and_reads_the_clock)
{
    struct pi_clock_samples samples;
    memset(&samples, 0, sizeof(samples));
    const uint64_t day = 24ull * 3600 * 1000 * MS;
    for (uint64_t ns = 0; ns <= day; ns += 50 * MS) /* the writer's default sample interval */
        pi_clock_samples_add(&samples, ns, computed_by(ns));
    cr_assert_leq(samples.capacity * sizeof(*samples.at), 512u << 10, "%zu samples held",
                  samples.capacity);
    cr_assert_eq(samples.at[samples.count - 1].ns, day, "the newest sample stays");
    /* between the samples kept, the clock's line runs straight over the fast changes */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 1000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t at = x % day, span = 3600 * 1000 * MS;
        uint64_t to = at + span > day ? day : at + span;
        double read =
            (double)(pi_clock_samples_at(&samples, to) - pi_clock_samples_at(&samples, at));
        double truth = (double)(computed_by(to) - computed_by(at));
        cr_assert_float_eq(read, truth, 50.0 * MS, "an hour from %.0f s: %.3f s, truly %.3f s",
                           (double)at / 1e9, read / 1e9, truth / 1e9);
    }
    pi_clock_samples_free(&samples);
}

Test(step_parts, the_clock_outside_its_samples_is_the_nearest_sample)
{
    struct pi_clock_samples samples;
    memset(&samples, 0, sizeof(samples));
    cr_assert_eq(pi_clock_samples_at(&samples, 5 * MS), 0, "no samples, no clock");
    /* a thread that ran all along: 1 ms of CPU a ms between 10 and 20 ms */
    pi_clock_samples_add(&samples, 10 * MS, 3 * MS);
    pi_clock_samples_add(&samples, 20 * MS, 13 * MS);
    cr_assert_eq(pi_clock_samples_at(&samples, 15 * MS), 8 * MS);
    /* before the first and after the last sample nothing was measured: the line is not
     * drawn on (a reversed step asked for times far past the end) */
    cr_assert_eq(pi_clock_samples_at(&samples, 1 * MS), 3 * MS);
    cr_assert_eq(pi_clock_samples_at(&samples, UINT64_MAX), 13 * MS);
    pi_clock_samples_free(&samples);
}
