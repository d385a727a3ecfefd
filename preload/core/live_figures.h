/*
 * live_figures.h - the running process's own figures, for `profinject top`:
 * counted by the writer from the records it drains (in full and in
 * summary mode alike), never by re-reading the trace. The main thread's
 * time by what it waited for, its steps as summary mode's policy marks
 * them (pi_summary_step_mark), and the GPU's busy time; read as one JSON
 * object by the control channel, which adds what other parts keep.
 */
#ifndef PI_LIVE_FIGURES_H
#define PI_LIVE_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#include "profinject/trace_format.h"

/* pi_live_take - count @count records of process @pid (its main thread's tid) as they reach
 * the writer (the writer thread only); a new @pid, a fork child's, starts from nothing;
 * @marks_steps: 0 in a process whose main thread's records are no steps (a worker) */
void pi_live_take(const struct pi_record *records, uint32_t count, uint32_t pid,
                  int marks_steps);

/**
 * pi_live_figures_json - the figures so far as the members of a JSON object, without its
 * braces: cumulative nanoseconds and counts, with the monotonic time they were read at, and
 * the last steps that ended, so that two readings give rates over the time between them
 * @ticks_per_second: the clock's rate, to give times in ns
 * Return: the length written into @out (cut at @size).
 */
size_t pi_live_figures_json(char *out, size_t size, double ticks_per_second);

#endif
