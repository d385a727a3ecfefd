/*
 * Unit: steps from the batches a DataLoader hands the main thread, against
 * a loop whose every step is known. A wait for the GPU counts in the step
 * it blocked; batches that came early get their steps where the loop's
 * posts (the next index to a worker) say they began, and share the time
 * evenly only where the loop does not post once a step. A batch's tensors
 * that come over a socket late stay in its receipt.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/host/steps.h"
#include "analysis/model/model.h"

#define MS 1000000ull
#define US 1000ull

static void feed(struct pi_steps *s, uint64_t ts, uint64_t dur, unsigned time_class,
                 uint64_t received)
{
    struct pi_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.ts_ns = ts;
    ev.dur_ns = dur;
    pi_steps_event(s, &ev, time_class, received);
}

/* A receipt at @at of @batches messages (a poll, then each message's length
 * and pickle); a poll that reads nothing when 0. Return: its end. */
static uint64_t receipt(struct pi_steps *s, uint64_t at, unsigned batches)
{
    feed(s, at, 100 * US, PI_TIME_DATA_WAIT, 0);
    at += 100 * US;
    for (unsigned i = 0; i < batches; i++) {
        feed(s, at, 10 * US, PI_TIME_DATA_WAIT, 4);
        feed(s, at + 10 * US, 10 * US, PI_TIME_DATA_WAIT, 345);
        at += 20 * US;
    }
    return at;
}

static uint64_t duration(const struct pi_steps *s, uint64_t step)
{
    struct pi_step_figures f;
    cr_assert(pi_steps_figures(s, step, &f), "step %llu", (unsigned long long)step);
    return f.end - f.start;
}

/* Steps @from to @to start where they began: at their receipt's end, or at their post. */
static void assert_started_where_they_began(const struct pi_steps *s, const uint64_t *starts,
                                            uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++) {
        struct pi_step_figures f;
        cr_assert(pi_steps_figures(s, i, &f));
        cr_assert(f.start == starts[i] || f.start == starts[i] + 200 * US,
                  "step %llu starts at %llu, not %llu", (unsigned long long)i,
                  (unsigned long long)f.start, (unsigned long long)starts[i]);
    }
}

Test(batch_receipts, a_wait_for_the_gpu_counts_in_the_step_it_blocked)
{
    struct pi_steps s;
    memset(&s, 0, sizeof(s));
    uint64_t blocked[] = {5 * MS, 1 * MS, 3 * MS, 2 * MS};
    for (uint64_t i = 0; i < 4; i++) {
        receipt(&s, 20 * MS * i, 1);
        feed(&s, 20 * MS * i + 10 * MS, blocked[i], PI_TIME_SYNC, 0); /* loss.item() */
    }
    receipt(&s, 80 * MS, 0); /* the loop ends: it waits for its workers to leave */
    pi_steps_receipts_finish(&s);
    pi_steps_finish(&s, 1);
    cr_assert_eq(s.count, 4);
    for (uint64_t i = 0; i < 4; i++) {
        struct pi_step_figures f;
        cr_assert(pi_steps_figures(&s, i, &f));
        cr_assert_eq(f.sync, blocked[i], "step %llu: %llu ns blocked", (unsigned long long)i,
                     (unsigned long long)f.sync);
    }
    pi_steps_free(&s);
}

/* A loop of receipts of @messages[r] batches, after each of which @steps[r]
 * steps of 10 ms run (step @slow: 150 ms); with @posts, each step posts at
 * its start, except step @unposted. @starts: where each step began.
 * Return: the steps run. */
static unsigned run_loop(struct pi_steps *s, const unsigned *messages, const unsigned *steps,
                         unsigned receipts, unsigned slow, int posts, unsigned unposted,
                         uint64_t *starts)
{
    uint64_t at = 0;
    unsigned n = 0;
    for (unsigned r = 0; r < receipts; r++) {
        at = receipt(s, at, messages[r]);
        for (unsigned k = 0; k < steps[r]; k++) {
            starts[n] = at;
            if (posts && n != unposted)
                pi_steps_wake(s, at + 200 * US);
            at += n == slow ? 150 * MS : 10 * MS;
            n++;
        }
    }
    receipt(s, at, 0); /* the loop ends: it waits for its workers to leave */
    pi_steps_receipts_finish(s);
    pi_steps_finish(s, 1);
    return n;
}

/* Ten steps, then a receipt of three batches whose first step computes
 * 150 ms, the second kept batch's step after a receipt of its own, then
 * ten more: 24 steps. */
static void loop_with_a_late_batch(struct pi_steps *s, int posts, uint64_t starts[24])
{
    static const unsigned messages[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1,
                                        1, 1, 1, 1, 1, 1};
    static const unsigned steps[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1, 1,
                                     1, 1, 1, 1, 1, 1};
    cr_assert_eq(run_loop(s, messages, steps, 22, 10, posts, 99, starts), 24);
}

Test(batch_receipts, batches_that_came_early_get_their_steps_where_the_posts_say)
{
    struct pi_steps s;
    memset(&s, 0, sizeof(s));
    uint64_t starts[24];
    loop_with_a_late_batch(&s, 1, starts);
    cr_assert_eq(s.count, 24);
    assert_started_where_they_began(&s, starts, 0, 24);
    cr_assert_geq(duration(&s, 10), 150 * MS);
    cr_assert_lt(duration(&s, 11), 20 * MS);
    pi_steps_free(&s);
}

Test(batch_receipts, without_a_post_a_step_batches_that_came_together_share_evenly)
{
    struct pi_steps s;
    memset(&s, 0, sizeof(s));
    uint64_t starts[24];
    loop_with_a_late_batch(&s, 0, starts);
    cr_assert_eq(s.count, 24, "the count stays exact");
    /* the receipt of three batches: its three steps share its span */
    uint64_t shared = duration(&s, 10);
    cr_assert(shared > 50 * MS && shared < 60 * MS, "%llu ns", (unsigned long long)shared);
    cr_assert_eq(duration(&s, 11), shared);
    pi_steps_free(&s);
}

Test(batch_receipts, a_missed_post_moves_no_step_past_the_next_receipt)
{
    /* a receipt of two batches used at once, the second's post missed (its
     * feeder was not waiting yet); the slow step 16 must stay step 16 */
    static const unsigned messages[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1,
                                        1, 1, 1, 1, 1};
    static const unsigned steps[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1,
                                     1, 1, 1, 1, 1};
    struct pi_steps s;
    memset(&s, 0, sizeof(s));
    uint64_t starts[22];
    cr_assert_eq(run_loop(&s, messages, steps, 21, 16, 1, 11, starts), 22);
    cr_assert_eq(s.count, 22);
    cr_assert_geq(duration(&s, 16), 150 * MS, "%llu ns", (unsigned long long)duration(&s, 16));
    assert_started_where_they_began(&s, starts, 13, 22);
    pi_steps_free(&s);
}

/* A socket call of the main thread (a batch's tensors through the resource sharer). */
static void socket_read(struct pi_steps *s, uint64_t ts, uint64_t dur)
{
    struct pi_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.rec.kind = PI_REC_IO;
    ev.rec.flags = PI_IO_FLAGS(PI_IO_READ, PI_FD_SOCKET, 0);
    ev.ts_ns = ts;
    ev.dur_ns = dur;
    pi_steps_event(s, &ev, PI_TIME_DATA_WAIT, 0);
}

/* Five steps of 10 ms; then, as step 6 asks for a batch that loads late, a batch that came
 * early is read and its tensors come 2.5 ms after its message (unpickled on a loaded
 * machine); the loop waits 60 ms more for its batch, computes 150 ms on it (step 6) and
 * 10 ms on the early one (step 7), and two steps after. */
Test(batch_receipts, tensors_that_come_late_stay_in_their_receipt)
{
    struct pi_steps s;
    memset(&s, 0, sizeof(s));
    uint64_t at = 0, starts[10];
    unsigned n = 0;
    for (; n < 5; n++) {
        at = receipt(&s, at, 1);
        starts[n] = at;
        pi_steps_wake(&s, at + 200 * US);
        at += 10 * MS;
    }
    at = receipt(&s, at, 1); /* the early batch's message */
    socket_read(&s, at + 2500 * US, 50 * US); /* its tensors */
    feed(&s, at + 2600 * US, 60 * MS, PI_TIME_DATA_WAIT, 0); /* a poll: the late batch */
    at = receipt(&s, at + 2600 * US + 60 * MS, 1);
    starts[n++] = at; /* step 6 (index 5) */
    pi_steps_wake(&s, at + 200 * US);
    at += 150 * MS;
    starts[n++] = at; /* step 7: the early batch, kept */
    pi_steps_wake(&s, at + 200 * US);
    at += 10 * MS;
    for (; n < 9; n++) {
        at = receipt(&s, at, 1);
        starts[n] = at;
        pi_steps_wake(&s, at + 200 * US);
        at += 10 * MS;
    }
    receipt(&s, at, 0); /* the loop ends: it waits for its workers to leave */
    pi_steps_receipts_finish(&s);
    pi_steps_finish(&s, 1);
    cr_assert_eq(s.count, 9, "%llu steps", (unsigned long long)s.count);
    cr_assert_geq(duration(&s, 5), 150 * MS, "the slow step: %llu ns",
                  (unsigned long long)duration(&s, 5));
    cr_assert_geq(duration(&s, 4), 70 * MS, "the step that waited for it: %llu ns",
                  (unsigned long long)duration(&s, 4));
    assert_started_where_they_began(&s, starts, 1, 9);
    pi_steps_free(&s);
}
