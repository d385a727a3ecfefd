/*
 * summary_mode.h - PROFINJECT_MODE=summary in the writer thread: the
 * records of high rate are counted into per-interval summaries instead of
 * being written one by one; the rest is written in full as always. Which
 * are which, and what ends a step, is the policy beside the record format
 * (profinject/summary_policy.h); this applies it. The hooks and their cost
 * do not change: they cannot know whether a record will be needed in full,
 * because a detail window opened by a slow step must hold that step's
 * records, and the step is known slow only at its end. So every record still reaches the writer,
 * which keeps the last ones in a flight ring (core/flight_ring.h).
 */
#ifndef PI_SUMMARY_MODE_H
#define PI_SUMMARY_MODE_H

#include <stdint.h>

#include "profinject/trace_format.h"

/* Room for @slots records in the writer's staging: what goes into the file */
typedef struct pi_record *(*pi_summary_stage_fn)(void *context, uint32_t slots);

/* The writer stages string @id's definition when it has not been written: a
 * quiet path (string_table.h) that a record about to be staged names */
typedef void (*pi_summary_define_fn)(void *context, uint32_t id);

/**
 * pi_summary_mode_start - a fresh state for this process's writer (a fork
 * child's too), writing through @stage and @define
 */
void pi_summary_mode_start(pi_summary_stage_fn stage, pi_summary_define_fn define,
                           void *context);

/**
 * pi_summary_mode_take - route @count records of a thread buffer: counted
 * into summaries (and kept in the flight ring), or staged in full
 */
void pi_summary_mode_take(const struct pi_record *records, uint32_t count);

/**
 * pi_summary_mode_flush - at each periodic flush: the interval's summaries
 * when it is over (all of them when @stopping), and the end of a detail
 * window that is due
 */
void pi_summary_mode_flush(int stopping);

/**
 * pi_summary_mode_request_detail - open (@on) or close a detail window at
 * the writer's next pass: a capture window asked for in summary mode (ctl
 * capture, run --duration), where recording never pauses; any thread (the
 * flush interval later at most)
 */
void pi_summary_mode_request_detail(int on);

#endif
