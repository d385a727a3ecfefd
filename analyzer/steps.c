/*
 * steps.c - training steps found without code changes.
 *
 * A DataLoader hands each batch to the main thread through a pipe: the
 * main thread waits (poll) and reads it, possibly with a few socket
 * exchanges for shared tensors, all within a millisecond or so. Such a
 * cluster of blocking pipe/socket calls that reads data from a pipe is a
 * batch receipt; each receipt starts a step, which lasts until the next.
 * The step's waiting time is the pipe/socket time inside it.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* Calls closer than this belong to the same receipt. */
#define RECEIPT_GAP_NS 2000000u
/* The first steps kept apart until the warm-up length is known. */
#define EARLY_STEPS 64

struct early_step {
    uint64_t total, wait, sync;
};

static struct early_step *early(struct pi_steps *s)
{
    if (!s->early)
        s->early = calloc(EARLY_STEPS, sizeof(struct early_step));
    return s->early;
}

void pi_steps_record(struct pi_steps *s, uint64_t total, uint64_t wait, uint64_t sync)
{
    if (s->count < EARLY_STEPS) {
        struct early_step *e = early(s);
        if (e)
            e[s->count] = (struct early_step){total, wait, sync};
    } else {
        pi_histogram_add(&s->steady_ns, total);
        s->steady_total_ns += total;
        s->steady_wait_ns += wait;
        s->steady_sync_ns += sync;
    }
    s->count++;
}

static void end_step(struct pi_steps *s, uint64_t end)
{
    pi_steps_record(s, end - s->step_start_ns, s->step_wait_ns, s->step_sync_ns);
}

/* A receipt ended at @at: the step before it ends, a new one starts. */
static void boundary(struct pi_steps *s, uint64_t at)
{
    if (s->step_start_ns)
        end_step(s, at);
    s->step_start_ns = at;
    s->step_wait_ns = 0;
    s->step_sync_ns = 0;
}

void pi_steps_event(struct pi_steps *s, const struct pi_event *ev, unsigned time_class,
                    int receives_data)
{
    uint64_t end = ev->ts_ns + ev->dur_ns;
    if (time_class == PI_TIME_DATA_WAIT) {
        if (s->receive_end_ns && ev->ts_ns > s->receive_end_ns + RECEIPT_GAP_NS) {
            if (s->in_receive)
                boundary(s, s->receive_end_ns);
            s->in_receive = 0;
        }
        s->in_receive |= receives_data;
        if (end > s->receive_end_ns)
            s->receive_end_ns = end;
        s->step_wait_ns += ev->dur_ns;
    } else if (time_class == PI_TIME_SYNC) {
        s->step_sync_ns += ev->dur_ns;
    }
}

void pi_steps_finish(struct pi_steps *s, unsigned warmup_steps)
{
    if (s->in_receive)
        boundary(s, s->receive_end_ns);
    s->in_receive = 0;
    uint64_t early_count = s->count < EARLY_STEPS ? s->count : EARLY_STEPS;
    uint64_t warmup = warmup_steps;
    if (warmup == 0 && s->count >= 3) {
        warmup = s->count / 10;
        warmup = warmup < 1 ? 1 : warmup > 10 ? 10 : warmup;
    }
    if (warmup > early_count)
        warmup = early_count;
    s->warmup = warmup;
    struct early_step *e = s->early;
    for (uint64_t i = 0; e && i < early_count; i++) {
        if (i < warmup) {
            pi_histogram_add(&s->warmup_ns, e[i].total);
            s->warmup_total_ns += e[i].total;
            s->warmup_wait_ns += e[i].wait;
        } else {
            pi_histogram_add(&s->steady_ns, e[i].total);
            s->steady_total_ns += e[i].total;
            s->steady_wait_ns += e[i].wait;
            s->steady_sync_ns += e[i].sync;
        }
    }
}
