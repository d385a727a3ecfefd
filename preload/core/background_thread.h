/*
 * background_thread.h - the profiler's own threads (writer, GPU timing,
 * control listener): detached, and started with every signal blocked so
 * that none of the application's signals is ever delivered to them. Their
 * CPU time is what profiling costs beyond the hooks, and is reported.
 */
#ifndef PI_BACKGROUND_THREAD_H
#define PI_BACKGROUND_THREAD_H

#include <stdint.h>

/* pi_background_thread - start @routine(@arg) as thread @name (15 characters at
 * most, shown by top -H and perf); 0, or an error number */
int pi_background_thread(const char *name, void *(*routine)(void *), void *arg);

/* pi_background_cpu_ns - CPU time used so far by the background threads still running */
uint64_t pi_background_cpu_ns(void);

/* pi_background_thread_is_ours - whether @tid is one of the threads started here */
int pi_background_thread_is_ours(uint32_t tid);

/* pi_background_after_fork - in a fork child: none of the parent's threads exists */
void pi_background_after_fork(void);

#endif
