/*
 * buffer_pool.h - fixed pool of record buffers handed between application
 * threads and the writer without locks.
 *
 * A buffer belongs to one thread while ACTIVE: only that thread appends,
 * publishing each record with a release store of `committed`. The writer
 * may copy the committed prefix at any time (periodic flush) and keeps its
 * own `flushed` mark. A thread that fills its buffer, or exits, marks it
 * RETIRED; the writer copies what is left and makes it FREE again.
 * When no buffer is FREE the thread drops records and counts them: the
 * application never waits for the writer.
 */
#ifndef PI_BUFFER_POOL_H
#define PI_BUFFER_POOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "profinject/trace_format.h"

enum pi_buffer_state { PI_BUF_FREE = 0, PI_BUF_ACTIVE = 1, PI_BUF_RETIRED = 2 };

struct pi_buffer {
    _Atomic uint32_t state;
    _Atomic uint32_t committed; /* records the owner has published */
    uint32_t flushed;           /* records the writer has copied (writer only) */
    uint32_t capacity;
    uint64_t sequence; /* order of acquisition: a thread's buffers are written in this order */
    struct pi_record *records;
};

struct pi_buffer_pool {
    struct pi_buffer *buffers;
    uint32_t count;
    uint32_t records_per_buffer;
    _Atomic uint32_t free_count;
    _Atomic uint64_t next_sequence;
    void *memory;
    size_t memory_size;
};

/**
 * pi_pool_init - map the pool's memory; pages are touched only when used
 * @pool: the pool to set up
 * @count: number of buffers
 * @records_per_buffer: capacity of each buffer
 *
 * Return: 0, or -1 with errno set when the memory cannot be mapped.
 */
int pi_pool_init(struct pi_buffer_pool *pool, uint32_t count, uint32_t records_per_buffer);

/* pi_pool_destroy - unmap the pool's memory */
void pi_pool_destroy(struct pi_buffer_pool *pool);

/**
 * pi_pool_acquire - take a FREE buffer for the calling thread
 * @pool: the pool
 *
 * Return: an ACTIVE, empty buffer, or NULL when every buffer is in use.
 */
struct pi_buffer *pi_pool_acquire(struct pi_buffer_pool *pool);

/* pi_pool_retire - the owner is done with @buf; the writer drains and frees it */
void pi_pool_retire(struct pi_buffer_pool *pool, struct pi_buffer *buf);

/* pi_pool_release - writer only: @buf is RETIRED and fully copied, make it FREE */
void pi_pool_release(struct pi_buffer_pool *pool, struct pi_buffer *buf);

/* pi_pool_reset - in a fork child: drop everything, every buffer becomes FREE */
void pi_pool_reset(struct pi_buffer_pool *pool);

/* pi_pool_sort_by_sequence - order @n buffer indices by acquisition, so that
 * each thread's records stay in order */
void pi_pool_sort_by_sequence(const struct pi_buffer_pool *pool, uint32_t *order, uint32_t n);

#endif
