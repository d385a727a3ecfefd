/*
 * threads.c - per-thread figures every part reads: which thread is the
 * main one, how long a thread was seen and how much of that it computed.
 */
#include "threads.h"

#include <stdio.h>
#include <string.h>

#include "analysis/common/array_room.h"

struct pi_thread_info *pi_main_thread(const struct pi_process_info *p)
{
    for (size_t i = 0; i < p->thread_count; i++)
        if ((int)p->threads[i].tid == p->header.pid)
            return &p->threads[i];
    return NULL;
}

uint64_t pi_thread_wall_ns(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    if ((int)t->tid == p->header.pid)
        return p->end_ns - p->start_ns;
    return t->last_ns > t->first_ns ? t->last_ns - t->first_ns : 0;
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
 * The kernel's figure where the trace has it for the thread's whole life in
 * it (a run recorded whole: a window's share of a thread's CPU is unknown).
 * Without it, all a thread did not spend in recorded waits is taken for CPU,
 * blocking calls that no hook sees included.
 */
uint64_t pi_thread_cpu_ns(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    uint64_t left = unaccounted_ns(p, t);
    if (t->cpu_measured && p->window_count == 0 && t->cpu_measured_ns < left)
        return t->cpu_measured_ns;
    return left;
}

uint64_t pi_thread_time_ns(const struct pi_process_info *p, const struct pi_thread_info *t,
                           enum pi_time_class class)
{
    if (class == PI_TIME_CPU)
        return pi_thread_cpu_ns(p, t);
    if (class == PI_TIME_OTHER)
        return unaccounted_ns(p, t) - pi_thread_cpu_ns(p, t);
    return t->time[class];
}

enum pi_time_class pi_wait_time_class(uint64_t kind)
{
    return kind == PI_WAIT_SLEEP ? PI_TIME_SLEEP : PI_TIME_LOCK_WAIT;
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
