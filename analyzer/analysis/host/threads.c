/*
 * threads.c - per-thread figures every part reads: which thread is the
 * main one, how long a thread was seen and how much of that it computed.
 */
#include "threads.h"

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

uint64_t pi_thread_cpu_ns(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    uint64_t wall = pi_thread_wall_ns(p, t), waited = 0;
    for (int c = 0; c < PI_TIME_CPU; c++)
        waited += t->time[c];
    return wall > waited ? wall - waited : 0;
}
