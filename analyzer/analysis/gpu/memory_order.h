/*
 * memory_order.h - CUDA allocations and frees in the order they happened
 * (memory_order.c).
 *
 * A trace file holds each thread's records in order, but threads' buffers
 * reach the file at different times, so a free on one thread may come
 * after a later allocation of the same address on another: with a
 * stream-ordered pool (cudaMallocAsync) the address comes back at once.
 * Taken in file order, that allocation would replace the live entry and
 * the free would then remove it: bytes counted twice, a free that matches
 * nothing. In time order they pair up: an allocation returned its pointer
 * before its end was read, and a free of it can only begin after that, so
 * allocations are keyed by their end and frees by their start. Records wait
 * here until the file has moved a horizon past them (every thread's
 * buffer reaches the file within a few flush intervals).
 */
#ifndef PI_MEMORY_ORDER_H
#define PI_MEMORY_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "reader/trace_reader.h"

struct pi_memory_order {
    struct pi_memory_waiting *items; /* a min-heap on time */
    size_t count, capacity;
    uint64_t horizon_ns, latest_ns;
};

/* pi_memory_order_init - @flush_interval_ns from the file's header sets the horizon */
void pi_memory_order_init(struct pi_memory_order *order, uint64_t flush_interval_ns);

/* pi_memory_order_seen - the file has reached @ts_ns (any record) */
void pi_memory_order_seen(struct pi_memory_order *order, uint64_t ts_ns);

/* pi_memory_order_push - an allocation, free or allocation call site record to put in order;
 * 0, or -1 out of memory */
int pi_memory_order_push(struct pi_memory_order *order, const struct pi_event *ev);

/**
 * pi_memory_order_pop - the earliest waiting record, when it is past the horizon
 * @all: take it whatever the horizon (the file has ended)
 * Return: 1 with *@ev set, 0 when none is ready.
 */
int pi_memory_order_pop(struct pi_memory_order *order, struct pi_event *ev, int all);

void pi_memory_order_free(struct pi_memory_order *order);

#endif
