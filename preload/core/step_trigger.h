/*
 * step_trigger.h - summary mode's trigger: steps as the writer sees them
 * go by, and whether one ended slower than the p99 of the steps before it
 * (and a quarter slower than their median: not by noise alone).
 *
 * Which records mark a step is the policy's (pi_summary_step_mark in
 * profinject/summary_policy.h): a record that is a step, or one that ends
 * a step begun at the previous such boundary.
 */
#ifndef PI_STEP_TRIGGER_H
#define PI_STEP_TRIGGER_H

#include <stdint.h>

#include "profinject/summary_policy.h"
#include "profinject/trace_format.h"

#define PI_STEP_HISTORY 1024 /* the steps a p99 is taken over */
#define PI_STEP_MIN_HISTORY 100 /* fewer steps trigger nothing: a p99 of fewer is their maximum */

struct pi_step_trigger {
    uint64_t last_boundary; /* ticks: where the previous PI_STEP_BOUNDARY record ended */
    uint64_t history[PI_STEP_HISTORY]; /* step durations in ticks, a ring */
    uint32_t count;                    /* steps seen, up to PI_STEP_HISTORY counted */
    uint32_t next;
    uint64_t threshold;      /* the p99 of history (at least 1.25 x its median), in ticks */
    uint32_t since_threshold; /* steps since threshold was computed */
};

/* pi_step_trigger_init - no steps seen */
void pi_step_trigger_init(struct pi_step_trigger *t);

/**
 * pi_step_trigger_record - look at one record as it reaches the writer
 * @mark: how @r marks a step, enum pi_step_mark
 * @start, @end: receive the step's span in ticks when it is the slow one
 * Return: 1 when @r ends a step slower than the threshold of the steps
 * before it (with at least PI_STEP_MIN_HISTORY of them), else 0.
 */
int pi_step_trigger_record(struct pi_step_trigger *t, unsigned mark, const struct pi_record *r,
                           uint64_t *start, uint64_t *end);

#endif
