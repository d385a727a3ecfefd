/*
 * stacks.h - call stacks as the trace keeps them: an array of struct
 * pi_stack_frame (Python frames first, then native ones), interned as one
 * PI_REC_STACK, so each distinct stack is written once per trace file and
 * records name it by id.
 */
#ifndef PI_STACKS_H
#define PI_STACKS_H

#include <stdint.h>

#include "profinject/trace_format.h"

/**
 * pi_stack_intern - the id of the stack made of @python frames followed by
 * the frames of the interned stack @native (0: none)
 * Return: the id, 0 when there is no frame or the table is full.
 */
uint32_t pi_stack_intern(const struct pi_stack_frame *python, int python_count, uint32_t native);

/**
 * pi_stack_intern_native - the id of the native stack of return addresses
 * @pcs (described and interned once per distinct stack)
 */
uint32_t pi_stack_intern_native(void *const *pcs, int n);

/* pi_stack_intern_launch - pi_stack_intern_native up to PI_NATIVE_SAMPLE_FRAMES_MAX frames:
 * a sampled launch's, from cuBLAS up to the autograd node that called it */
uint32_t pi_stack_intern_launch(void *const *pcs, int n);

/* pi_stack_intern_sampled - pi_stack_intern_native for a CPU sample: up to
 * PI_NATIVE_SAMPLE_FRAMES_MAX frames, described by pi_native_describe_by_range
 * (the native sampler's drain only) */
uint32_t pi_stack_intern_sampled(void *const *pcs, int n);

/**
 * pi_stack_emit_call_site - write the PI_REC_CALL_SITE that gives @stack to
 * the earlier record of this thread of @kind, @flags and @detail made at @ts
 * @key: the record's key (see PI_REC_CALL_SITE)
 * @site_flags: enum pi_call_site_flag
 */
void pi_stack_emit_call_site(uint16_t kind, uint16_t flags, unsigned detail, uint64_t ts,
                             uint64_t key, uint32_t stack, uint16_t site_flags);

#endif
