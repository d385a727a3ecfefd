/*
 * batch_receipts.c - training steps from the batches a DataLoader hands the
 * main thread.
 *
 * A DataLoader hands each batch to the main thread through a pipe: the
 * main thread waits (poll) and reads it, possibly with a few socket
 * exchanges for shared tensors, all within a millisecond or so. Such a
 * cluster of blocking pipe/socket calls that reads data from a pipe is a
 * batch receipt; each receipt starts a step, which lasts until the next.
 *
 * A receipt may bring several batches: when a worker's batch comes before
 * the one the loop needs (at an epoch's start, or behind a slow batch),
 * the DataLoader keeps it, and the step that uses it reads no pipe. Each
 * message read (its 4-byte header) is one batch, so the count of steps is
 * exact. Where each such step starts is told by the post that every step
 * makes at its start: the DataLoader hands the next index to a worker's
 * queue, whose feeder thread it wakes. Where the main thread posts once per
 * step of a single batch, the posts after a receipt are its steps' starts,
 * and a batch kept for later goes to the span it is used in; elsewhere the
 * time up to the next receipt is split evenly among the receipt's batches.
 *
 * Python's multiprocessing Connection sends a message as its 4-byte length,
 * then the pickle, and reads the length with a read of its own. Not every
 * message is a batch: with persistent_workers each worker acknowledges a new
 * epoch with a small one (_ResumeIteration, 84 bytes against 430 for a batch
 * of two shared tensors). A message under a quarter of the largest batch
 * message so far is taken for such a control message.
 *
 * A step's waiting time is the pipe/socket time inside it, its GPU
 * synchronisation the time blocked in CUDA inside it: both are running
 * totals of the main thread, read where the step starts and ends.
 */
#include <stdlib.h>

#include "steps.h"
#include "analysis/common/array_room.h"

/* Calls closer than this belong to the same receipt. */
#define RECEIPT_GAP_NS 2000000u
/* The length that starts each message of a multiprocessing Connection. */
#define CONNECTION_HEADER_BYTES 4
/* A control message is this many times smaller than a batch, or more. */
#define CONTROL_MESSAGE_RATIO 4
/* A batch's shared tensors come over sockets after its message, at most this long after. */
#define RECEIPT_TENSORS_GAP_NS 20000000u
/* Posts kept at most between two receipts; past it, the span's steps are split evenly. */
#define WAKES_MAX 4096u

static struct pi_step_point point_at(const struct pi_steps *s, uint64_t ns)
{
    return (struct pi_step_point){ns, s->wait_total_ns, s->sync_total_ns};
}

/* One step from @from to @to, with the waits between them. */
static void record_between(struct pi_steps *s, struct pi_step_point from, struct pi_step_point to)
{
    pi_steps_record(s, from.ns, to.ns, to.wait_ns - from.wait_ns, to.sync_ns - from.sync_ns);
}

/* Whether the main thread posts once per step: most spans held as many posts as batches
 * (of one batch, or of several where batches come out of order all the time). */
static int posts_mark_steps(const struct pi_steps *s)
{
    return s->spans >= 3 && s->spans_one_post_a_batch * 10 >= s->spans * 9;
}

/*
 * Count a span of @count posts and @held batches (@carried_in of them left by the span
 * before) towards posts_mark_steps, as if the posts marked the steps: a span with fewer
 * posts than batches then leaves the rest to the next, and agrees when the next one's
 * posts take them too. Counted span by span alone, a batch kept past the next receipt
 * (behind a late one, or at an epoch's start) made two spans disagree, and a 40-step loop
 * beside busy processes fell under the bar at its slow step, whose kept batches then
 * shared its time evenly. A span without a post says nothing: at an epoch's end the
 * loop has no index left to post.
 */
static void count_agreement(struct pi_steps *s, size_t count, uint64_t held, uint64_t carried_in)
{
    if (count == 0 || s->wakes_overflowed) {
        s->agreement_carry = 0;
        s->agreement_open = 0;
        return;
    }
    uint64_t own = held > carried_in ? held - carried_in : 0;
    uint64_t expected = own + s->agreement_carry;
    s->spans++;
    if (count == expected) {
        s->spans_one_post_a_batch += 1 + (uint64_t)s->agreement_open;
        s->agreement_carry = 0;
        s->agreement_open = 0;
    } else if (count < expected && !s->agreement_open) {
        s->agreement_carry = expected - count;
        s->agreement_open = 1;
    } else {
        /* the batches carried in were not taken here: the two spans disagree, and only this
         * span's own batches may still be taken by the next (carried for ever, one early
         * disagreement at an epoch's start left every span after it one post short) */
        s->agreement_carry = own > count ? own - count : 0;
        s->agreement_open = s->agreement_carry != 0;
    }
}

/* The steps from the open span's start to @end: one per post when the posts
 * mark the steps and the batches held allow it, else one per batch held,
 * the compute time split evenly and the waits to the last. Fewer posts than
 * batches leave the rest to the next span (a kept batch used after the next
 * receipt), once: a batch carried in must be used there, or the span takes
 * every batch it holds, so a missed post moves no step past one span.
 * @last: no receipt comes after, every batch held gets its step. */
static void record_span(struct pi_steps *s, struct pi_step_point end, int last)
{
    const struct pi_step_point *posts = s->wakes;
    size_t count = 0;
    while (count < s->wake_count && posts[count].ns < end.ns)
        count++;
    uint64_t held = s->batches_held ? s->batches_held : 1;
    int carried = s->batches_carried_in != 0;
    /* as many posts as batches place the steps wherever the loop is in its run (the first
     * spans too); fewer carry a batch on only where the posts are known to mark steps */
    int by_posts = !s->wakes_overflowed && count >= 1 &&
                   (count == held || (posts_mark_steps(s) && count < held && !carried && !last));
    count_agreement(s, count, held, s->batches_carried_in);
    uint64_t steps = by_posts ? count : held;
    s->batches_held = held - steps;
    struct pi_step_point from = s->span_start;
    if (by_posts) {
        for (uint64_t i = 1; i < steps; i++) {
            record_between(s, from, posts[i]);
            from = posts[i];
        }
    } else {
        uint64_t waited = end.wait_ns - from.wait_ns;
        uint64_t busy = end.ns - from.ns > waited ? end.ns - from.ns - waited : 0;
        for (uint64_t i = 1; i < steps; i++) {
            uint64_t at = from.ns + busy / steps;
            pi_steps_record(s, from.ns, at, 0, 0);
            from.ns = at;
        }
    }
    record_between(s, from, end);
}

/* Posts before @ns are past: the spans that held them are recorded. */
static void forget_posts_before(struct pi_steps *s, uint64_t ns)
{
    struct pi_step_point *posts = s->wakes;
    size_t past = 0;
    while (past < s->wake_count && posts[past].ns < ns)
        past++;
    for (size_t i = past; i < s->wake_count; i++)
        posts[i - past] = posts[i];
    s->wake_count -= past;
    if (s->wake_count == 0)
        s->wakes_overflowed = 0;
}

/*
 * Whether the cluster that just ended may hold batches the loop took as they came, each a
 * step of its own, rather than batches that came early and were kept. Once the last
 * batches of an epoch are asked for, the loop posts no more indices, and a loop with no
 * work of its own between batches waits for the next within microseconds: its last batches
 * make one cluster of several messages. So does a batch that came early while the loop
 * waited for a late one; but then the loop goes on to read more batches, where at an
 * epoch's end it only waits for its workers to end. The cluster's boundary waits for that.
 */
static int maybe_taken_as_they_came(const struct pi_steps *s)
{
    return s->cluster_message_count >= 2 && s->cluster_message_count == s->receive_messages &&
           !s->wakes_overflowed && posts_mark_steps(s);
}

/*
 * Where the loop took the batch of a receipt that ended at @end: its post of the next index,
 * made just before next() returns the batch, where one came within RECEIPT_TENSORS_GAP_NS;
 * else the receipt's end. Between the two the loop's own thread rebuilds the batch, which
 * on a loaded machine takes milliseconds: the loop's step starts when it has its batch.
 */
static struct pi_step_point taken_at(const struct pi_steps *s, struct pi_step_point end)
{
    const struct pi_step_point *posts = s->wakes;
    for (size_t i = 0; i < s->wake_count; i++)
        if (posts[i].ns >= end.ns)
            return posts[i].ns <= end.ns + RECEIPT_TENSORS_GAP_NS ? posts[i] : end;
    return end;
}

/* The receipt that ended at s->receipt_end is over: the span before it ends, a new one starts. */
static void boundary(struct pi_steps *s, int taken_as_they_came)
{
    struct pi_step_point end = taken_as_they_came ? s->receipt_end : taken_at(s, s->receipt_end);
    if (taken_as_they_came) {
        /* each message but the last ends the span before it and starts its batch's own */
        for (unsigned i = 0; i + 1 < s->cluster_message_count; i++) {
            if (s->span_start.ns)
                record_span(s, s->cluster_messages[i], 0);
            s->span_start = s->cluster_messages[i];
            s->batches_carried_in = s->batches_held;
            s->batches_held++;
        }
        s->receive_messages = 1;
    }
    s->cluster_message_count = 0;
    if (s->span_start.ns) {
        record_span(s, end, 0);
        /* the loop's next() from its first wait to the take: what it was not blocked in,
         * it spent receiving the batch (unpickling it, rebuilding its tensors) */
        uint64_t spent = end.ns - s->cluster_start.ns;
        uint64_t blocked = end.wait_ns - s->cluster_start.wait_ns;
        if (!taken_as_they_came && end.ns > s->cluster_start.ns && spent > blocked)
            pi_steps_receive(s, spent - blocked);
    }
    s->span_start = end;
    s->batches_carried_in = s->batches_held;
    s->batches_held += s->receive_messages ? s->receive_messages : 1;
    s->receive_messages = 0;
    s->quiet.ns = 0;
    forget_posts_before(s, end.ns);
}

/* The boundary left pending after a cluster of several messages: @taken_as_they_came
 * when the loop then waited without reading more batches, or the trace ended. */
static void resolve_pending(struct pi_steps *s, int taken_as_they_came)
{
    if (!s->boundary_pending)
        return;
    s->boundary_pending = 0;
    struct pi_step_point now = s->receipt_end, cluster = s->cluster_start;
    s->receipt_end = s->pending_end;
    s->cluster_start = s->pending_cluster_start;
    boundary(s, taken_as_they_came);
    s->receipt_end = now;
    s->cluster_start = cluster;
}

/* A read of @bytes from a pipe: a message's length, the start of its pickle,
 * or other data. Return: nonzero when it brought (part of) a batch. */
static int count_message(struct pi_steps *s, uint64_t bytes, uint64_t end_ns)
{
    if (bytes == CONNECTION_HEADER_BYTES && !s->after_header) {
        s->after_header = 1;
        return 0;
    }
    int after_header = s->after_header;
    s->after_header = 0;
    if (!after_header)
        return 1;
    if (bytes * CONTROL_MESSAGE_RATIO < s->largest_payload)
        return 0; /* a control message */
    s->receive_messages++;
    s->message_end_ns = end_ns;
    if (bytes > s->largest_payload)
        s->largest_payload = bytes;
    return 1;
}

/*
 * Whether @ev, a pipe or socket call after a pause, still belongs to the receipt before it. A
 * batch's tensors in shared memory come after its message through the resource sharer's
 * socket, and unpickling the message in between can take longer than RECEIPT_GAP_NS on a
 * loaded machine (measured: 2.5 ms). Such a socket call is the receipt's while no post has
 * come since it began: the loop posts only once it has the batch it asked for. Taken for a
 * receipt of its own, the batches that came early while the loop waited for a late one
 * started a step there, and every step after was numbered one or two too far.
 */
static int rest_of_receipt(const struct pi_steps *s, const struct pi_event *ev)
{
    if (!s->in_receive || ev->rec.kind != PI_REC_IO ||
        PI_IO_CLASS(ev->rec.flags) != PI_FD_SOCKET ||
        ev->ts_ns > s->receipt_end.ns + RECEIPT_TENSORS_GAP_NS)
        return 0;
    const struct pi_step_point *posts = s->wakes;
    return s->wake_count == 0 || posts[s->wake_count - 1].ns < s->cluster_start.ns;
}

/*
 * Whether the loop took the batch of the receipt's last message before @ev began: it posted
 * the next index after reading it, as it does once it has the batch it asked for. The
 * receipt ends there, however soon the loop waits again: a loop with no work of its own
 * between batches waits again within microseconds, and by time gaps alone every receipt of
 * a run would be one.
 */
static int batch_taken(const struct pi_steps *s, const struct pi_event *ev)
{
    if (!s->in_receive || !s->message_end_ns || s->wake_count == 0)
        return 0;
    const struct pi_step_point *posts = s->wakes;
    uint64_t post = posts[s->wake_count - 1].ns;
    return post >= s->message_end_ns && ev->ts_ns >= post;
}

/*
 * Whether the loop kept the batch of the cluster's last message for later rather than take
 * it: it posted no index since, where it posts once a step (or, before its first step, had
 * posted its first indices). A batch that comes before the one the loop asks for (at an
 * epoch's start, where the workers race, or behind a late one) is no step's start: the
 * loop waits on, and the cluster goes on to the batch it takes.
 */
static int kept_for_later(const struct pi_steps *s)
{
    if (!s->in_receive || !s->message_end_ns || s->wakes_overflowed)
        return 0;
    const struct pi_step_point *posts = s->wakes;
    if (s->wake_count && posts[s->wake_count - 1].ns >= s->message_end_ns)
        return 0;
    return posts_mark_steps(s) || (!s->span_start.ns && s->wake_count);
}

void pi_steps_event(struct pi_steps *s, const struct pi_event *ev, unsigned time_class,
                    uint64_t received)
{
    if (time_class == PI_TIME_SYNC) {
        s->sync_total_ns += ev->dur_ns;
        return;
    }
    if (time_class != PI_TIME_DATA_WAIT)
        return;
    /* a read after a poll that found its descriptor ready belongs to that poll's wait, however
     * long the loop then took to run again: beside busy processes, or while another thread
     * held the GIL, 5 ms passed between them, and the batch read there was taken for one
     * that came after the loop had waited for nothing */
    int polled_ready = s->ready_polled && ev->rec.kind == PI_REC_IO &&
                       (pi_io_traits(PI_IO_OP(ev->rec.flags)) & PI_IO_RECEIVES);
    s->ready_polled = ev->rec.kind == PI_REC_IO && pi_io_waits_ready(PI_IO_OP(ev->rec.flags)) &&
                      !(ev->rec.flags & PI_FLAG_FAILED) && ev->rec.arg[1] > 0;
    if (s->receipt_end.ns && !polled_ready && ((ev->ts_ns > s->receipt_end.ns + RECEIPT_GAP_NS &&
                               !rest_of_receipt(s, ev) && !kept_for_later(s)) ||
                              batch_taken(s, ev))) {
        if (s->in_receive && maybe_taken_as_they_came(s)) {
            s->boundary_pending = 1;
            s->pending_end = s->receipt_end;
            s->pending_cluster_start = s->cluster_start;
        } else if (s->in_receive) {
            boundary(s, 0);
        } else {
            resolve_pending(s, 1);
            if (!s->quiet.ns)
                s->quiet = s->cluster_start;
        }
        s->in_receive = 0;
        s->cluster_start = point_at(s, ev->ts_ns);
        if (!s->boundary_pending)
            s->cluster_message_count = 0;
    }
    if (received)
        resolve_pending(s, 0);
    if (!s->cluster_start.ns)
        s->cluster_start = point_at(s, ev->ts_ns);
    uint64_t messages = s->receive_messages;
    if (received && count_message(s, received, ev->ts_ns + ev->dur_ns))
        s->in_receive = 1;
    s->wait_total_ns += ev->dur_ns;
    uint64_t end = ev->ts_ns + ev->dur_ns;
    s->receipt_end = point_at(s, end > s->receipt_end.ns ? end : s->receipt_end.ns);
    if (s->receive_messages > messages && s->cluster_message_count < 16)
        s->cluster_messages[s->cluster_message_count++] = s->receipt_end;
    else if (s->cluster_message_count && ev->rec.kind == PI_REC_IO &&
             PI_IO_CLASS(ev->rec.flags) == PI_FD_SOCKET)
        s->cluster_messages[s->cluster_message_count - 1] = s->receipt_end; /* its tensors */
}

void pi_steps_wake(struct pi_steps *s, uint64_t ts)
{
    if (s->wake_count == WAKES_MAX ||
        pi_array_room(&s->wakes, &s->wake_capacity, s->wake_count, sizeof(struct pi_step_point),
                      64) != 0) {
        s->wakes_overflowed = 1;
        return;
    }
    ((struct pi_step_point *)s->wakes)[s->wake_count++] = point_at(s, ts);
}

void pi_steps_receipts_finish(struct pi_steps *s)
{
    resolve_pending(s, 1);
    if (s->in_receive) {
        boundary(s, 0);
    } else if (s->span_start.ns && s->cluster_start.ns > s->span_start.ns && !s->quiet.ns) {
        s->quiet = s->cluster_start;
    }
    /* The step after the last receipt ends where the loop next waited on a
     * pipe without reading a batch (the DataLoader joining its workers at the
     * end of the epoch); a loop that never did so is left open, uncounted. */
    if (s->span_start.ns && s->quiet.ns > s->span_start.ns)
        record_span(s, s->quiet, 1);
    s->span_start.ns = 0;
    s->in_receive = 0;
    free(s->wakes);
    s->wakes = NULL;
    s->wake_count = s->wake_capacity = 0;
}
