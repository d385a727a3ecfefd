/* working_span.c - the main thread's time between its first and last waits for data (see
 * working_span.h). */
#include "working_span.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/host/thread_cpu.h"

void pi_working_span_wait(struct pi_process_info *p, const struct pi_thread_info *t,
                          const struct pi_record *r, uint64_t ts, uint64_t dur, unsigned time_class)
{
    struct pi_working_span *w = &p->working;
    int64_t fd = (int64_t)r->arg[0];
    int ready_wait = pi_io_waits_ready(PI_IO_OP(r->flags));
    /* the receives of what the last wait found ready (a message's length, then its bytes)
     * are part of that wait */
    int continues = w->start_ns != 0 && !ready_wait && w->ready_fd == fd;
    if (continues)
        return;
    w->ready_fd = ready_wait ? fd : -1;
    /* what the thread waited in calls recorded one by one (summarised ones are apart) */
    uint64_t recorded[PI_TIME_CPU];
    for (int c = 0; c < PI_TIME_CPU; c++)
        recorded[c] = t->time[c] - w->summarised[c];
    if (w->start_ns == 0) {
        w->start_ns = ts + dur;
        memcpy(w->waited_at_start, recorded, sizeof(w->waited_at_start));
    }
    /* the span ends where this wait starts, should it be the last */
    w->end_ns = ts;
    memcpy(w->waited_at_end, recorded, sizeof(w->waited_at_end));
    if (time_class < PI_TIME_CPU)
        w->waited_at_end[time_class] -= dur;
}

void pi_working_span_summarised(struct pi_process_info *p, uint64_t start_ns, uint64_t end_ns,
                                uint64_t ns, unsigned time_class)
{
    struct pi_working_span *w = &p->working;
    if (time_class >= PI_TIME_CPU)
        return;
    w->summarised[time_class] += ns;
    if (w->piece_count == w->piece_capacity) {
        size_t capacity = w->piece_capacity ? 2 * w->piece_capacity : 16;
        struct pi_summarised_wait *grown = realloc(w->pieces, capacity * sizeof(*grown));
        if (!grown)
            return;
        w->pieces = grown;
        w->piece_capacity = capacity;
    }
    w->pieces[w->piece_count++] = (struct pi_summarised_wait){start_ns, end_ns, ns, time_class};
}

void pi_working_span_free(struct pi_process_info *p)
{
    free(p->working.pieces);
    p->working.pieces = NULL;
    p->working.piece_count = p->working.piece_capacity = 0;
}

/* The summarised waits of @class inside the span, each by the part of its own span that
 * falls inside (they were spread over it evenly, as far as anyone knows). */
static uint64_t summarised_in_span(const struct pi_working_span *w, unsigned time_class)
{
    double ns = 0;
    for (size_t i = 0; i < w->piece_count; i++) {
        const struct pi_summarised_wait *piece = &w->pieces[i];
        if (piece->time_class != time_class)
            continue;
        uint64_t from = piece->start_ns > w->start_ns ? piece->start_ns : w->start_ns;
        uint64_t to = piece->end_ns < w->end_ns ? piece->end_ns : w->end_ns;
        if (piece->end_ns <= piece->start_ns) /* one call: whole, if it is inside */
            ns += piece->start_ns >= w->start_ns && piece->start_ns < w->end_ns ? piece->ns : 0;
        else if (to > from)
            ns += (double)piece->ns * (double)(to - from) / (double)(piece->end_ns - piece->start_ns);
    }
    return (uint64_t)ns;
}

void pi_working_span_clock(struct pi_process_info *p)
{
    struct pi_working_span *w = &p->working;
    const struct pi_clock_samples *c = &p->main_cpu;
    w->cpu_measured = w->end_ns > w->start_ns && c->count >= 2 && c->at[0].ns <= w->start_ns &&
                      w->end_ns <= c->at[c->count - 1].ns;
    if (w->cpu_measured) {
        uint64_t from = pi_clock_samples_at(c, w->start_ns), to = pi_clock_samples_at(c, w->end_ns);
        w->cpu_ns = to > from ? to - from : 0;
    }
}

uint64_t pi_working_span_ns(const struct pi_process_info *p, enum pi_time_class class)
{
    const struct pi_working_span *w = &p->working;
    if (w->end_ns <= w->start_ns)
        return 0;
    uint64_t wall = w->end_ns - w->start_ns, waited = 0;
    if (class == PI_TIME_CLASS_COUNT)
        return wall;
    uint64_t by_class[PI_TIME_CPU];
    for (int c = 0; c < PI_TIME_CPU; c++) {
        by_class[c] = w->waited_at_end[c] - w->waited_at_start[c] + summarised_in_span(w, (unsigned)c);
        waited += by_class[c];
    }
    if (class < PI_TIME_CPU)
        return by_class[class];
    uint64_t left = wall > waited ? wall - waited : 0;
    uint64_t cpu = w->cpu_measured && w->cpu_ns < left ? w->cpu_ns : left;
    return class == PI_TIME_CPU ? cpu : left - cpu;
}
