/* flight_ring.c - the last summarised records in full (see flight_ring.h). */
#include "flight_ring.h"

#include <stdlib.h>

void pi_flight_ring_init(struct pi_flight_ring *ring, uint32_t capacity)
{
    ring->records = NULL;
    ring->capacity = capacity;
    ring->pushed = ring->cleared = 0;
}

void pi_flight_ring_free(struct pi_flight_ring *ring)
{
    free(ring->records);
    pi_flight_ring_init(ring, ring->capacity);
}

int pi_flight_ring_push(struct pi_flight_ring *ring, const struct pi_record *r)
{
    /* malloc'd pages are touched only as records come: a quiet process pays little */
    if (!ring->records && !(ring->records = malloc(sizeof(*r) * ring->capacity)))
        return -1;
    ring->records[ring->pushed & (ring->capacity - 1)] = *r;
    ring->pushed++;
    return 0;
}

uint64_t pi_flight_ring_replay(const struct pi_flight_ring *ring, uint64_t since, uint64_t until,
                               void (*visit)(void *context, const struct pi_record *r),
                               void *context)
{
    uint64_t first = ring->pushed > ring->capacity ? ring->pushed - ring->capacity : 0;
    if (first < ring->cleared)
        first = ring->cleared;
    uint64_t visited = 0;
    for (uint64_t i = first; i < ring->pushed; i++) {
        const struct pi_record *r = &ring->records[i & (ring->capacity - 1)];
        if (r->ts >= since && r->ts < until) {
            visit(context, r);
            visited++;
        }
    }
    return visited;
}

void pi_flight_ring_clear(struct pi_flight_ring *ring)
{
    ring->cleared = ring->pushed;
}
