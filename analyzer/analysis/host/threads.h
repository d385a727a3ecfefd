/* threads.h - per-thread figures (threads.c). */
#ifndef PI_THREADS_H
#define PI_THREADS_H

#include "analysis/model/model.h"

/* pi_main_thread - the main thread of @process, or NULL */
struct pi_thread_info *pi_main_thread(const struct pi_process_info *process);

/* pi_thread_wall_ns - how long @thread was seen; the process span for the main thread */
uint64_t pi_thread_wall_ns(const struct pi_process_info *process,
                           const struct pi_thread_info *thread);

/* pi_thread_cpu_ns - wall time not accounted to any wait */
uint64_t pi_thread_cpu_ns(const struct pi_process_info *process,
                          const struct pi_thread_info *thread);

#endif
