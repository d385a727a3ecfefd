/* working_span.c - the main thread's time between its first and last waits for data (see
 * working_span.h). */
#include "working_span.h"

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
    if (w->start_ns == 0) {
        w->start_ns = ts + dur;
        memcpy(w->waited_at_start, t->time, sizeof(w->waited_at_start));
    }
    /* the span ends where this wait starts, should it be the last */
    w->end_ns = ts;
    memcpy(w->waited_at_end, t->time, sizeof(w->waited_at_end));
    if (time_class < PI_TIME_CPU)
        w->waited_at_end[time_class] -= dur;
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
    for (int c = 0; c < PI_TIME_CPU; c++)
        waited += w->waited_at_end[c] - w->waited_at_start[c];
    if (class < PI_TIME_CPU)
        return w->waited_at_end[class] - w->waited_at_start[class];
    uint64_t left = wall > waited ? wall - waited : 0;
    uint64_t cpu = w->cpu_measured && w->cpu_ns < left ? w->cpu_ns : left;
    return class == PI_TIME_CPU ? cpu : left - cpu;
}
