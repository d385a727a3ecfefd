/* threads.h - per-thread figures (threads.c). */
#ifndef PI_THREADS_H
#define PI_THREADS_H

#include "analysis/model/model.h"

/* pi_main_thread - the main thread of @process, or NULL */
struct pi_thread_info *pi_main_thread(const struct pi_process_info *process);

/* pi_thread_wall_ns - how long @thread was seen; the process span for the main thread */
uint64_t pi_thread_wall_ns(const struct pi_process_info *process,
                           const struct pi_thread_info *thread);

/* pi_thread_cpu_ns - CPU time: measured (the kernel's), else wall time not accounted to
 * any wait */
uint64_t pi_thread_cpu_ns(const struct pi_process_info *process,
                          const struct pi_thread_info *thread);

/* pi_thread_time_ns - @thread's time in @class: a recorded wait's total, its CPU time
 * (pi_thread_cpu_ns), or for PI_TIME_OTHER the wall time neither in a recorded wait nor on
 * a CPU: blocked in calls no hook sees, or ready to run and waiting for a CPU (0 where CPU
 * is not measured) */
uint64_t pi_thread_time_ns(const struct pi_process_info *process,
                           const struct pi_thread_info *thread, enum pi_time_class class);

/* pi_thread_listed - whether @thread has a row in the reports' thread tables: it made
 * recorded calls, or it computed (a thread whose work no hook sees) */
int pi_thread_listed(const struct pi_process_info *process, const struct pi_thread_info *thread);

/* pi_wait_time_class - where a wait (PI_REC_WAIT) of @kind puts its thread's time */
enum pi_time_class pi_wait_time_class(uint64_t kind);

/* pi_io_time_class - where an I/O call (PI_REC_IO, or a summary of them) of @op on a
 * descriptor of @fd_class puts its thread's time: the main thread's waits for and receives
 * from pipes and sockets are its wait for data; regular files, and opens of a named path,
 * file I/O; the rest other I/O */
enum pi_time_class pi_io_time_class(unsigned op, unsigned fd_class, int main_thread,
                                    int has_path);

/* pi_thread_of - the thread @tid of @process, added when new; NULL without memory */
struct pi_thread_info *pi_thread_of(struct pi_process_info *process, uint32_t tid);

/* pi_thread_name - name the thread @tid of @process */
void pi_thread_name(struct pi_process_info *process, uint32_t tid, const char *name);

/* pi_threads_trim - once @process's file is read: its threads' array no longer than they
 * are (it doubles from 16 as they come: 3 KB in every rank of 2 threads) */
void pi_threads_trim(struct pi_process_info *process);

#endif
