/*
 * threads.c - per-thread figures every part reads: which thread is the
 * main one, how long a thread was seen and how much of that it computed.
 */
#include "threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/host/thread_cpu.h"

struct pi_thread_info *pi_main_thread(const struct pi_process_info *p)
{
    for (size_t i = 0; i < p->thread_count; i++)
        if ((int)p->threads[i].tid == p->header.pid)
            return &p->threads[i];
    return NULL;
}

/* The part of [@from, @to) that was recorded: all of it, or what capture windows hold. */
static uint64_t recorded_ns(const struct pi_process_info *p, uint64_t from, uint64_t to)
{
    if (to <= from)
        return 0;
    if (!p->window_count)
        return to - from;
    uint64_t in = 0;
    for (size_t i = 0; i < p->window_count; i++) {
        uint64_t start = from > p->windows[i].start_ns ? from : p->windows[i].start_ns;
        uint64_t end = to < p->windows[i].end_ns ? to : p->windows[i].end_ns;
        in += end > start ? end - start : 0;
    }
    return in;
}

uint64_t pi_thread_wall_ns(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    if ((int)t->tid == p->header.pid)
        return recorded_ns(p, p->start_ns, p->end_ns);
    return recorded_ns(p, t->first_ns, t->last_ns);
}

/* Wall time not accounted to any recorded wait. */
static uint64_t unaccounted_ns(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    uint64_t wall = pi_thread_wall_ns(p, t), waited = 0;
    for (int c = 0; c < PI_TIME_CPU; c++)
        waited += t->time[c];
    return wall > waited ? wall - waited : 0;
}

/*
 * The kernel's figure where the trace has it: the thread's end record in a
 * run recorded whole; with capture windows or an attach, its clock at their
 * edges as well (format 7, where /proc is the process's own). Without it,
 * all a thread did not spend in recorded waits is taken for CPU, blocking
 * calls that no hook sees included. @left: the thread's wall time not in a
 * recorded wait.
 */
static uint64_t cpu_of(const struct pi_process_info *p, const struct pi_thread_info *t,
                       uint64_t left)
{
    uint64_t cpu = pi_thread_cpu_recorded(&t->cpu);
    if (t->cpu.measured && (p->window_count == 0 || p->thread_cpu_edges) && cpu < left)
        return cpu;
    return left;
}

uint64_t pi_thread_cpu_ns(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    return cpu_of(p, t, unaccounted_ns(p, t));
}

uint64_t pi_thread_time_ns(const struct pi_process_info *p, const struct pi_thread_info *t,
                           enum pi_time_class class)
{
    if (class == PI_TIME_CPU)
        return pi_thread_cpu_ns(p, t);
    if (class == PI_TIME_OTHER) {
        uint64_t left = unaccounted_ns(p, t);
        return left - cpu_of(p, t, left);
    }
    return t->time[class];
}

int pi_thread_listed(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    uint64_t wall = pi_thread_wall_ns(p, t);
    if (wall == 0)
        return 0;
    return t->events >= 2 || (t->cpu.measured && pi_thread_cpu_ns(p, t) >= wall / 100);
}

enum pi_time_class pi_wait_time_class(uint64_t kind)
{
    return kind == PI_WAIT_SLEEP ? PI_TIME_SLEEP : PI_TIME_LOCK_WAIT;
}

enum pi_time_class pi_io_time_class(unsigned op, unsigned fd_class, int main_thread,
                                    int has_path)
{
    if (pi_io_is_data_wait(op, fd_class))
        return main_thread ? PI_TIME_DATA_WAIT : PI_TIME_OTHER_IO;
    if (fd_class == PI_FD_FILE || (has_path && pi_io_opens(op)))
        return PI_TIME_FILE_IO;
    return PI_TIME_OTHER_IO;
}

struct pi_thread_info *pi_thread_of(struct pi_process_info *p, uint32_t tid)
{
    /* records come in runs of one thread: try the last one first */
    if (p->thread_count && p->threads[p->last_thread].tid == tid)
        return &p->threads[p->last_thread];
    for (size_t i = 0; i < p->thread_count; i++)
        if (p->threads[i].tid == tid) {
            p->last_thread = i;
            return &p->threads[i];
        }
    for (size_t i = 0; i < p->thread_count; i++)
        if (p->threads[i].tid == tid)
            return &p->threads[i];
    if (pi_array_room(&p->threads, &p->thread_capacity, p->thread_count, sizeof(*p->threads),
                      16) != 0)
        return NULL;
    struct pi_thread_info *t = &p->threads[p->thread_count++];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    t->first_ns = UINT64_MAX;
    return t;
}

void pi_thread_name(struct pi_process_info *p, uint32_t tid, const char *name)
{
    struct pi_thread_info *t = pi_thread_of(p, tid);
    if (t && name)
        snprintf(t->name, sizeof(t->name), "%s", name);
}

void pi_threads_trim(struct pi_process_info *p)
{
    if (p->thread_count == 0 || p->thread_count == p->thread_capacity)
        return;
    struct pi_thread_info *fitted = realloc(p->threads, p->thread_count * sizeof(*p->threads));
    if (!fitted)
        return; /* kept as it was */
    p->threads = fitted;
    p->thread_capacity = p->thread_count;
}
