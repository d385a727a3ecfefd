/*
 * held_call.h - a thread's outermost calls of one kind, told from those nested in them as
 * their span records come. A thread's records arrive in return order, inner before outer,
 * so a call is known to be outermost only once the next call of its kind does not enclose
 * it: the latest one is held until then (span_steps.c: optimizer steps, backward calls,
 * batches; request_calls.c: tokenizer calls inside a request).
 */
#ifndef PI_HELD_CALL_H
#define PI_HELD_CALL_H

#include <stdint.h>

/* One call of a marked function: entry, return, string id of its name. */
struct pi_held_call {
    uint64_t start, end;
    uint32_t name;
    int held; /* a call is held here */
};

/**
 * pi_held_call_take - @c came: the held call it encloses (it returned inside @c) gives way
 * to it; else the held call was an outermost one
 * Return: 1 with that one in @placed, 0 when there is none.
 */
static inline int pi_held_call_take(struct pi_held_call *held, const struct pi_held_call *c,
                                    struct pi_held_call *placed)
{
    if (held->held && c->start <= held->start) {
        *held = *c;
        return 0;
    }
    int had = held->held;
    *placed = *held;
    *held = *c;
    return had;
}

#endif
