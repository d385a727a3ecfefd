/*
 * span_stack.h - each thread's open spans (python_spans.h), and the record
 * a span writes when it closes (PI_REC_SPAN).
 */
#ifndef PI_SPAN_STACK_H
#define PI_SPAN_STACK_H

#include <stdint.h>

/* A thread's open spans. Deeper ones are counted, not kept: their records are not
 * written (a recursion of marked functions). */
#define OPEN_MAX 32
struct open_span {
    uint64_t sid; /* name | kind << 32 */
    uint64_t ts, cpu_ns, device;
    uint64_t resident; /* the process's resident bytes at its entry; UINT64_MAX: not read */
    uint64_t flags;    /* ORed into its record's arg0 (PI_SPAN_NO_GRAD) */
};
struct pi_span_stack {
    uint32_t generation; /* pi_generation it was set up in: a fork child starts empty */
    uint32_t depth;
    uint32_t module_depth; /* nn.Module calls open, the outermost one a span */
    const void *module_type; /* the last outermost module's type, and its span id */
    uint64_t module_sid;
    const void *optimizer_type; /* the last optimizer's type, and its step's span id */
    uint64_t optimizer_sid;
    struct open_span open[OPEN_MAX];
};

/* pi_span_stack - the calling thread's stack, made at its first span; NULL where it could
 * not be made (nothing is recorded then). A fork child's starts empty. */
struct pi_span_stack *pi_span_stack(void);

/* pi_span_open - span @sid (name id | kind << 32) opens on @s now */
void pi_span_open(struct pi_span_stack *s, uint64_t sid);

/* pi_span_close - the innermost open span of @sid ends now (@raised: by an exception) and
 * is recorded; spans opened after it and never closed are dropped with it */
void pi_span_close(struct pi_span_stack *s, uint64_t sid, int raised);

/* pi_span_flag_innermost - @flag (PI_SPAN_NO_GRAD) into the record of the innermost open
 * span of @s */
void pi_span_flag_innermost(struct pi_span_stack *s, uint64_t flag);

/* pi_span_note - words (string id @text) the framework gave about the innermost open span of
 * @s, recorded now with that span's entry (PI_REC_SPAN_NOTE); none open: nothing */
void pi_span_note(struct pi_span_stack *s, uint64_t text);

/* pi_span_measure_reads - measure what reading the thread's CPU clock and the process's
 * resident memory cost here, which decides for which names each is read (span_stack.c);
 * once, before the first span */
void pi_span_measure_reads(void);

/* pi_span_device_bytes_from - where the device memory held now is read from (the CUDA
 * hooks' live allocations); without it a span's memory change is 0 */
void pi_span_device_bytes_from(uint64_t (*now)(void));

#endif
