/*
 * thread_cpu.h - a thread's CPU time while recording was on, from the
 * kernel's figures in the trace: its end record (PI_REC_THREAD_EXIT) and,
 * from format 7, every thread's clock at the edges of capture windows and
 * at an attach (PI_REC_THREAD_CPU).
 */
#ifndef PI_THREAD_CPU_H
#define PI_THREAD_CPU_H

#include <stdint.h>

#include "analysis/model/model.h"

/* pi_thread_cpu_edge - the thread's clock read @ns at an @opening (nonzero) or closing edge */
void pi_thread_cpu_edge(struct pi_thread_cpu *cpu, uint64_t ns, int opening);

/* pi_thread_cpu_end - the thread's clock @ns as it ended (or the process did), recorded */
void pi_thread_cpu_end(struct pi_thread_cpu *cpu, uint64_t ns);

/* pi_thread_cpu_recorded - its CPU time in the spans that were recorded (ns) */
uint64_t pi_thread_cpu_recorded(const struct pi_thread_cpu *cpu);

/* pi_clock_samples_add - the main thread's clock @cpu_ns at @ns, after the samples before */
void pi_clock_samples_add(struct pi_clock_samples *samples, uint64_t ns, uint64_t cpu_ns);

/* pi_clock_samples_at - the clock at @ns, on the line between the samples around it; before
 * the first sample the first's clock, after the last the last's (0 with no samples) */
uint64_t pi_clock_samples_at(const struct pi_clock_samples *samples, uint64_t ns);

/* pi_clock_samples_still_ns - how long before @end_ns the clock last advanced: the samples
 * at the end where it gained under 1% of the time between them (a thread blocked, waiting
 * or hung) count as standing still; samples after @end_ns are not looked at; 0 with fewer
 * than two samples */
uint64_t pi_clock_samples_still_ns(const struct pi_clock_samples *samples, uint64_t end_ns);

/* pi_clock_samples_free - release @samples' memory */
void pi_clock_samples_free(struct pi_clock_samples *samples);

#endif
