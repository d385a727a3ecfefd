/*
 * thread_cpu.c - a thread's CPU time while recording was on (see
 * thread_cpu.h). A span opens at an opening edge, or where the thread began
 * (its clock at 0: a thread started inside a window is in no edge before
 * it), and closes at a closing edge or at its end.
 */
#include "thread_cpu.h"

#include "analysis/common/array_room.h"

void pi_thread_cpu_edge(struct pi_thread_cpu *c, uint64_t ns, int opening)
{
    c->measured = 1;
    if (!opening && ns > c->open_ns)
        c->spans_ns += ns - c->open_ns;
    /* after a close, until the next opening: nothing more to count */
    c->open_ns = ns;
}

void pi_thread_cpu_end(struct pi_thread_cpu *c, uint64_t ns)
{
    c->measured = 1;
    /* the thread's own record and the writer's, when it ended as the process did */
    if (c->ended && ns <= c->end_ns)
        return;
    if (!c->ended)
        c->end_open_ns = c->open_ns;
    c->ended = 1;
    c->end_ns = ns;
}

uint64_t pi_thread_cpu_recorded(const struct pi_thread_cpu *c)
{
    uint64_t last = c->ended && c->end_ns > c->end_open_ns ? c->end_ns - c->end_open_ns : 0;
    return c->spans_ns + last;
}

/* A day of samples 50 ms apart would be 1.7 million (28 MB); at this many the older ones are
 * thinned, every other one dropped. A step, or a bucket of a plot, then reads a line drawn
 * over a longer span; sums over many steps stay exact, the clock being read where it was. */
#define SAMPLES_KEPT 16384

static void thin_out(struct pi_clock_samples *c)
{
    size_t kept = 0;
    for (size_t i = 0; i + 1 < c->count; i += 2)
        c->at[kept++] = c->at[i];
    c->at[kept++] = c->at[c->count - 1]; /* the newest stays: the span's end */
    c->count = kept;
}

void pi_clock_samples_add(struct pi_clock_samples *c, uint64_t ns, uint64_t cpu_ns)
{
    if (c->count && ns <= c->at[c->count - 1].ns)
        return; /* out of order: the line through the others stands */
    if (c->count >= SAMPLES_KEPT)
        thin_out(c);
    if (pi_array_room(&c->at, &c->capacity, c->count, sizeof(*c->at), 256) != 0)
        return;
    c->at[c->count++] = (struct pi_clock_sample){ns, cpu_ns};
}

uint64_t pi_clock_samples_at(const struct pi_clock_samples *c, uint64_t ns)
{
    if (c->count == 0)
        return 0;
    /* outside the samples the line is not drawn on: a damaged step's end before its start
     * asked for the clock past the last sample, and the line's slope took it past 2^64 */
    if (ns <= c->at[0].ns)
        return c->at[0].cpu_ns;
    if (ns >= c->at[c->count - 1].ns)
        return c->at[c->count - 1].cpu_ns;
    size_t low = 0, high = c->count - 1;
    while (high - low > 1) {
        size_t middle = low + (high - low) / 2;
        if (c->at[middle].ns <= ns)
            low = middle;
        else
            high = middle;
    }
    uint64_t span = c->at[high].ns - c->at[low].ns;
    if (span == 0 || c->at[high].cpu_ns < c->at[low].cpu_ns)
        return c->at[low].cpu_ns;
    return c->at[low].cpu_ns + (uint64_t)((double)(c->at[high].cpu_ns - c->at[low].cpu_ns) *
                                          (double)(ns - c->at[low].ns) / (double)span);
}

void pi_clock_samples_free(struct pi_clock_samples *c)
{
    free(c->at);
    c->at = NULL;
    c->count = c->capacity = 0;
}

/* A clock that gains less than 1/STILL_SHARE of the time between two samples stood still:
 * a thread that waits wakes now and then (a timed poll, the GIL's 5 ms) and gains tens of
 * microseconds a 100 ms sample; one that runs gains most of it. */
#define STILL_SHARE 100

uint64_t pi_clock_samples_still_ns(const struct pi_clock_samples *c, uint64_t end_ns)
{
    size_t last = c->count;
    while (last > 0 && c->at[last - 1].ns > end_ns)
        last--; /* taken after @end_ns: a signal handler's own work, not the thread's */
    if (last < 2)
        return 0;
    size_t i = last - 1;
    for (; i > 0; i--) {
        uint64_t between = c->at[i].ns - c->at[i - 1].ns;
        uint64_t gained = c->at[i].cpu_ns > c->at[i - 1].cpu_ns ? c->at[i].cpu_ns - c->at[i - 1].cpu_ns
                                                                 : 0;
        if (gained * STILL_SHARE >= between)
            break;
    }
    return end_ns > c->at[i].ns ? end_ns - c->at[i].ns : 0;
}
