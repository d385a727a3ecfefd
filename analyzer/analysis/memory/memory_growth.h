/*
 * memory_growth.h - memory growth over the steady steps (per step), or
 * over the last third of a trace without steps (per second).
 */
#ifndef PI_MEMORY_GROWTH_H
#define PI_MEMORY_GROWTH_H

#include "analysis/model/model.h"

/* pi_memory_growth_steady_start - before the device memory is settled: keep the call sites of
 * what the steady steps allocate */
void pi_memory_growth_steady_start(struct pi_process_info *process);

/* pi_memory_growth - once steps and memory are settled: fill @process->growth */
void pi_memory_growth(struct pi_process_info *process);

#endif
