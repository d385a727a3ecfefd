/*
 * live_figures.c - the process's figures as the writer drains its records
 * (see live_figures.h). The writer alone writes them; the control thread
 * reads them whenever asked, so each is an atomic of its own: a reading
 * may mix a record's figures with the one before, never tear a number.
 */
#include "live_figures.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "profinject/in_flight_words.h"
#include "profinject/summary_policy.h"
#include "recorder.h"

/* What the main thread's recorded waits were, as the analyzer's time classes name them. */
enum live_class { DATA_WAIT, FILE_IO, OTHER_IO, LOCK_WAIT, SLEEP, SYNC, LIVE_CLASSES };
static const char *const class_names[LIVE_CLASSES] = {"data_wait", "file_io", "other_io",
                                                       "lock_wait", "sleep", "sync"};

#define STEPS_KEPT 256 /* the last steps, for a window's percentiles */

static struct {
    _Atomic uint64_t waited[LIVE_CLASSES]; /* ticks */
    _Atomic uint64_t gpu_busy;             /* ticks of GPU work timed */
    _Atomic uint64_t gpu_until;            /* the latest end of it: GPU times come in batches,
                                              so their share is of the span they cover */
    _Atomic uint64_t steps;
    _Atomic uint64_t step_end[STEPS_KEPT], step_length[STEPS_KEPT]; /* ticks, a ring */
    uint64_t last_boundary; /* the writer's alone */
    uint32_t pid;           /* whose figures: a fork child's writer starts them again */
} live;

/* Which class a main-thread record's time is, or LIVE_CLASSES for none. */
static enum live_class class_of(const struct pi_record *r)
{
    switch (r->kind) {
    case PI_REC_IO: {
        unsigned op = PI_IO_OP(r->flags), fd_class = PI_IO_CLASS(r->flags);
        if (pi_io_is_data_wait(op, fd_class))
            return DATA_WAIT;
        return fd_class == PI_FD_FILE ? FILE_IO : OTHER_IO;
    }
    case PI_REC_WAIT:
        return r->arg[0] == PI_WAIT_SLEEP ? SLEEP : LOCK_WAIT;
    case PI_REC_GPU_SYNC:
    case PI_REC_GPU_COPY:
        return pi_gpu_host_waits(r) ? SYNC : LIVE_CLASSES;
    default:
        return LIVE_CLASSES;
    }
}

/* The writer alone adds: a load and a store, no locked instruction on the drain's path. */
static inline void add(_Atomic uint64_t *figure, uint64_t amount)
{
    atomic_store_explicit(figure, atomic_load_explicit(figure, memory_order_relaxed) + amount,
                          memory_order_relaxed);
}

static void step_ended(uint64_t end, uint64_t length)
{
    uint64_t n = atomic_load_explicit(&live.steps, memory_order_relaxed);
    atomic_store_explicit(&live.step_end[n % STEPS_KEPT], end, memory_order_relaxed);
    atomic_store_explicit(&live.step_length[n % STEPS_KEPT], length, memory_order_relaxed);
    atomic_store_explicit(&live.steps, n + 1, memory_order_release);
}

static void take(const struct pi_record *r, uint32_t pid, int marks_steps)
{
    int main_thread = r->tid == pid;
    if (r->kind == PI_REC_GPU_TIME) {
        add(&live.gpu_busy, r->dur);
        if (r->ts + r->dur > atomic_load_explicit(&live.gpu_until, memory_order_relaxed))
            atomic_store_explicit(&live.gpu_until, r->ts + r->dur, memory_order_relaxed);
    }
    if (!main_thread)
        return;
    enum live_class c = class_of(r);
    if (c != LIVE_CLASSES)
        add(&live.waited[c], r->dur);
    unsigned mark = marks_steps ? pi_summary_step_mark(r, 1) : PI_STEP_NONE;
    if (mark == PI_STEP_SPAN) {
        step_ended(r->ts + r->dur, r->dur);
    } else if (mark == PI_STEP_BOUNDARY) {
        uint64_t end = r->ts + r->dur;
        if (live.last_boundary && end > live.last_boundary)
            step_ended(end, end - live.last_boundary);
        live.last_boundary = end;
    }
}

/* Every figure back to 0, one atomic store each: the control thread may be reading them. */
static void start_again(void)
{
    for (int c = 0; c < LIVE_CLASSES; c++)
        atomic_store_explicit(&live.waited[c], 0, memory_order_relaxed);
    atomic_store_explicit(&live.gpu_busy, 0, memory_order_relaxed);
    atomic_store_explicit(&live.gpu_until, 0, memory_order_relaxed);
    atomic_store_explicit(&live.steps, 0, memory_order_release);
    live.last_boundary = 0;
}

void pi_live_take(const struct pi_record *records, uint32_t count, uint32_t pid,
                  int marks_steps)
{
    if (live.pid != pid) { /* the parent's figures are not the child's */
        start_again();
        live.pid = pid;
    }
    for (uint32_t i = 0; i < count; i++)
        take(&records[i], pid, marks_steps);
}

static uint64_t ticks_ns(uint64_t ticks, double rate)
{
    return (uint64_t)((double)ticks * 1e9 / rate);
}

size_t pi_live_figures_json(char *out, size_t size, double ticks_per_second)
{
    double rate = ticks_per_second > 0 ? ticks_per_second : 1e9;
    size_t at = 0;
#define SAY(...)                                                                                   \
    do {                                                                                           \
        int n_ = snprintf(out + at, size - at, __VA_ARGS__);                                      \
        if (n_ > 0)                                                                                \
            at = (size_t)n_ < size - at ? at + (size_t)n_ : size - 1;                              \
    } while (0)
    uint64_t now = pi_clock_ticks();
    SAY("\"now_ns\": %llu, \"main_waits_ns\": {", (unsigned long long)ticks_ns(now, rate));
    for (int c = 0; c < LIVE_CLASSES; c++)
        SAY("%s\"%s\": %llu", c ? ", " : "", class_names[c],
            (unsigned long long)ticks_ns(atomic_load_explicit(&live.waited[c], memory_order_relaxed), rate));
    uint64_t steps = atomic_load_explicit(&live.steps, memory_order_acquire);
    SAY("}, \"gpu_busy_ns\": %llu, \"gpu_until_ns\": %llu, \"steps\": %llu, "
        "\"recent_steps\": [",
        (unsigned long long)ticks_ns(atomic_load_explicit(&live.gpu_busy, memory_order_relaxed), rate),
        (unsigned long long)ticks_ns(atomic_load_explicit(&live.gpu_until, memory_order_relaxed), rate),
        (unsigned long long)steps);
    /* the last steps, oldest first: [end_ns, length_ns] */
    uint64_t kept = steps < STEPS_KEPT ? steps : STEPS_KEPT;
    for (uint64_t i = steps - kept; i < steps; i++)
        SAY("%s[%llu, %llu]", i == steps - kept ? "" : ", ",
            (unsigned long long)ticks_ns(
                atomic_load_explicit(&live.step_end[i % STEPS_KEPT], memory_order_relaxed), rate),
            (unsigned long long)ticks_ns(
                atomic_load_explicit(&live.step_length[i % STEPS_KEPT], memory_order_relaxed), rate));
    SAY("]");
    /* what the main thread is blocked in now, and since when */
    struct pi_wait_snapshot main;
    if (pi_wait_of_thread(live.pid ? live.pid : (uint32_t)getpid(), &main) && now > main.since) {
        char words[96];
        pi_in_flight_words(main.what, words, sizeof(words));
        SAY(", \"main_blocked_ns\": %llu, \"main_blocked_in\": \"%s\"",
            (unsigned long long)ticks_ns(now - main.since, rate), words);
    }
#undef SAY
    return at;
}
