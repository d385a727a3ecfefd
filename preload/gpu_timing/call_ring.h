/*
 * call_ring.h - the calls timed through CUPTI, as each thread made them:
 * when each began and ended on our clock, and its correlation id.
 *
 * CUPTI names the GPU work of a call by its own correlation id and
 * describes the call in an API activity record (thread, start, end). With
 * CUPTI reading our clock, the call whose interval overlaps that record's
 * on the same thread is the one our launch record describes: a hook only
 * writes three numbers into its thread's ring, and nothing is asked of
 * CUPTI on the application's path.
 */
#ifndef PI_CALL_RING_H
#define PI_CALL_RING_H

#include <stdint.h>

/**
 * pi_call_ring_note - the calling thread's timed call ran from @start to @end
 * @start: clock ticks before the real call
 * @end: clock ticks after it
 * @correlation: our correlation id of its launch or copy record
 *
 * The hot path: a few stores into the thread's ring, which is mapped on the
 * thread's first call. A thread that gets no ring is counted (pi_call_ring_missed).
 */
void pi_call_ring_note(uint64_t start, uint64_t end, uint64_t correlation);

enum pi_call_lookup {
    PI_CALL_FOUND,   /* *correlation is set */
    PI_CALL_UNTIMED, /* no timed call of ours overlaps: a call we did not time */
    PI_CALL_GONE,    /* it was older than the ring still holds: a lost duration */
};

/**
 * pi_call_ring_find - our call on thread @thread that overlaps [@start, @end]
 * @thread: kernel thread id, or pthread_t truncated to 32 bits when @by_pthread
 * @correlation: receives its correlation id
 *
 * One reader at a time (the caller serialises). Return: enum pi_call_lookup.
 */
enum pi_call_lookup pi_call_ring_find(uint32_t thread, int by_pthread, uint64_t start, uint64_t end,
                                      uint64_t *correlation);

/* pi_call_ring_missed - calls that could not be noted since the last call (no ring for their thread) */
uint64_t pi_call_ring_missed(void);

/* pi_call_ring_after_fork - in a fork child: the parent's calls are not ours to match */
void pi_call_ring_after_fork(void);

#endif
