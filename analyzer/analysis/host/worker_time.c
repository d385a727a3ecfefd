/* worker_time.c - the data-loader workers' time by activity (see worker_time.h). */
#include "worker_time.h"

#include <string.h>

#include "analysis/host/threads.h"
#include "analysis/host/working_span.h"

const char *pi_worker_activity_name(enum pi_worker_activity activity)
{
    static const char *const names[PI_WORKER_ACTIVITY_COUNT] = {
        "reading files", "computing", "sleeping", "waiting on locks/IPC", "idle", "other"};
    return activity < PI_WORKER_ACTIVITY_COUNT ? names[activity] : "?";
}

/* A worker's main thread blocks on a pipe only for its index queue (its results go out
 * through its queue's feeder thread), and, should it start processes itself, that wait
 * counts as a data wait. */
static enum pi_worker_activity activity_of(enum pi_time_class class)
{
    switch (class) {
    case PI_TIME_FILE_IO:
        return PI_WORKER_READING;
    case PI_TIME_CPU:
        return PI_WORKER_COMPUTING;
    case PI_TIME_SLEEP:
        return PI_WORKER_SLEEPING;
    case PI_TIME_LOCK_WAIT:
    case PI_TIME_SYNC:
        return PI_WORKER_WAITING;
    case PI_TIME_OTHER_IO:
    case PI_TIME_DATA_WAIT:
        return PI_WORKER_IDLE;
    default:
        return PI_WORKER_OTHER;
    }
}

uint64_t pi_worker_busy_ns(const struct pi_worker_time *w)
{
    uint64_t idle = w->ns[PI_WORKER_IDLE];
    return w->wall_ns > idle ? w->wall_ns - idle : 0;
}

int pi_is_worker_of(const struct pi_process_info *q, const struct pi_process_info *parent)
{
    return q != parent && q->header.ppid == parent->header.pid && pi_main_thread(q);
}

/* How many workers of @parent were alive when @q started (itself included). */
static size_t alive_at_start(const struct pi_analysis *a, const struct pi_process_info *parent,
                             const struct pi_process_info *q)
{
    size_t n = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *r = &a->processes[i];
        n += pi_is_worker_of(r, parent) && r->start_ns <= q->start_ns && q->start_ns < r->end_ns;
    }
    return n;
}

int pi_worker_time_of(const struct pi_analysis *a, const struct pi_process_info *parent,
                      struct pi_worker_time *w)
{
    memset(w, 0, sizeof(*w));
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *q = &a->processes[i];
        if (!pi_is_worker_of(q, parent))
            continue;
        const struct pi_thread_info *main = pi_main_thread(q);
        w->workers++;
        /* from its first index to its last where the trace shows both, else its life */
        uint64_t span = pi_working_span_ns(q, PI_TIME_CLASS_COUNT);
        w->wall_ns += span ? span : pi_thread_wall_ns(q, main);
        for (int c = 0; c < PI_TIME_CLASS_COUNT; c++)
            w->ns[activity_of((enum pi_time_class)c)] +=
                span ? pi_working_span_ns(q, (enum pi_time_class)c)
                     : pi_thread_time_ns(q, main, (enum pi_time_class)c);
        size_t alive = alive_at_start(a, parent, q);
        w->concurrent = alive > w->concurrent ? alive : w->concurrent;
    }
    return w->workers > 0;
}
