/*
 * flight_ring.h - summary mode's flight recorder: the last records that
 * summaries counted, kept in full in memory, so that a detail window
 * opened by a slow step (known slow only at its end) holds that step's
 * records. Owned by the writer thread.
 */
#ifndef PI_FLIGHT_RING_H
#define PI_FLIGHT_RING_H

#include <stdint.h>

#include "profinject/trace_format.h"

struct pi_flight_ring {
    struct pi_record *records; /* allocated at the first push */
    uint32_t capacity;         /* a power of two */
    uint64_t pushed;           /* records ever pushed: the next goes at pushed % capacity */
    uint64_t cleared;          /* records before this one are gone */
};

/* pi_flight_ring_init - an empty ring of @capacity records (a power of two), nothing allocated */
void pi_flight_ring_init(struct pi_flight_ring *ring, uint32_t capacity);

void pi_flight_ring_free(struct pi_flight_ring *ring);

/* pi_flight_ring_push - keep @r, overwriting the oldest when full (0, -1 out of memory) */
int pi_flight_ring_push(struct pi_flight_ring *ring, const struct pi_record *r);

/**
 * pi_flight_ring_replay - the records kept that started in [@since,
 * @until) ticks, oldest first, through @visit
 * Return: how many were visited.
 */
uint64_t pi_flight_ring_replay(const struct pi_flight_ring *ring, uint64_t since, uint64_t until,
                               void (*visit)(void *context, const struct pi_record *r),
                               void *context);

/* pi_flight_ring_clear - forget every record kept */
void pi_flight_ring_clear(struct pi_flight_ring *ring);

#endif
