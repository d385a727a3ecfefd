/*
 * buffer_pool.h - pool of record buffers handed between application
 * threads and the writer without locks.
 *
 * A buffer belongs to one thread while ACTIVE: only that thread appends,
 * publishing each record with a release store of `committed`. The writer
 * may copy the committed prefix at any time (periodic flush) and keeps its
 * own `flushed` mark. A thread that fills its buffer, or exits, marks it
 * RETIRED; the writer copies what is left and makes it FREE again.
 * When no buffer is FREE the thread drops records and counts them: the
 * application never waits for the writer.
 *
 * Every live thread that records holds a buffer, so the pool grows with
 * the threads, up to a bound: a thread that starts recording maps one more
 * chunk when the live threads would take three quarters of the pool (once
 * per chunk, at a thread's start, never on the path of a record), and the
 * writer does as it passes, for what a thread could not. Chunks are never unmapped while recording: a
 * buffer's address stays valid for its owner, and the count of buffers
 * only grows (published with a release store after the chunk is ready).
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

#define PI_POOL_MAX_CHUNKS 64u

struct pi_buffer_pool {
    struct pi_buffer *chunks[PI_POOL_MAX_CHUNKS]; /* chunk_buffers headers each */
    _Atomic uint32_t count;                      /* buffers published, a multiple of chunk_buffers */
    uint32_t chunk_buffers;
    uint32_t max_count;
    uint32_t records_per_buffer;
    _Atomic uint32_t free_count;
    _Atomic uint64_t next_sequence;
    _Atomic uint32_t growing; /* a chunk is being mapped: one grower at a time */
    size_t chunk_size;        /* bytes mapped per chunk */
};

/**
 * pi_pool_init - map the pool's first chunk; pages are touched only when used
 * @pool: the pool to set up
 * @count: number of buffers to start with (one chunk)
 * @max_count: how far pi_pool_grow may take it; rounded down to whole
 *     chunks, at most PI_POOL_MAX_CHUNKS of them, never below @count
 * @records_per_buffer: capacity of each buffer
 *
 * Return: 0, or -1 with errno set when the memory cannot be mapped.
 */
int pi_pool_init(struct pi_buffer_pool *pool, uint32_t count, uint32_t max_count,
                 uint32_t records_per_buffer);

/* pi_pool_destroy - unmap the pool's memory */
void pi_pool_destroy(struct pi_buffer_pool *pool);

/* pi_pool_count - the buffers published so far (acquire: each one is ready) */
static inline uint32_t pi_pool_count(struct pi_buffer_pool *pool)
{
    return atomic_load_explicit(&pool->count, memory_order_acquire);
}

/* pi_pool_buffer - buffer @index, below a count read with pi_pool_count */
static inline struct pi_buffer *pi_pool_buffer(struct pi_buffer_pool *pool, uint32_t index)
{
    return &pool->chunks[index / pool->chunk_buffers][index % pool->chunk_buffers];
}

/**
 * pi_pool_acquire - take a FREE buffer for the calling thread
 * @pool: the pool
 *
 * Return: an ACTIVE, empty buffer, or NULL when every buffer is in use.
 */
struct pi_buffer *pi_pool_acquire(struct pi_buffer_pool *pool);

/* pi_pool_running_low - few buffers are free and the pool may still grow:
 * an application thread that sees it wakes the writer (a load or two) */
static inline int pi_pool_running_low(struct pi_buffer_pool *pool)
{
    uint32_t count = atomic_load_explicit(&pool->count, memory_order_relaxed);
    return count < pool->max_count &&
           atomic_load_explicit(&pool->free_count, memory_order_relaxed) < count / 4;
}

/**
 * pi_pool_grow - map one more chunk when @threads, the live
 * threads that record (each holds a buffer or looks for one), are three
 * quarters of the pool or more. Buffers waiting for the writer (RETIRED)
 * are no reason: a writer behind drains them, and more memory would only
 * let the backlog grow.
 *
 * Any thread may call it: a caller that finds another growing returns 0
 * at once, never waits.
 * Return: 1 when it grew, 0 when it need not or may not (at max_count, or
 * another thread is growing it), -1 with errno when the memory cannot be
 * mapped.
 */
int pi_pool_grow(struct pi_buffer_pool *pool, uint32_t threads);

/* pi_pool_retire - the owner is done with @buf; the writer drains and frees it */
void pi_pool_retire(struct pi_buffer_pool *pool, struct pi_buffer *buf);

/* pi_pool_release - writer only: @buf is RETIRED and fully copied, make it FREE */
void pi_pool_release(struct pi_buffer_pool *pool, struct pi_buffer *buf);

/* pi_pool_reset - in a fork child: drop everything, every buffer becomes FREE */
void pi_pool_reset(struct pi_buffer_pool *pool);

/* pi_pool_sort_by_sequence - order @n buffer indices by acquisition, so that
 * each thread's records stay in order; @keys: room for @n, scratch */
void pi_pool_sort_by_sequence(struct pi_buffer_pool *pool, uint32_t *order, uint64_t *keys,
                              uint32_t n);

/* pi_pool_bytes - the memory mapped for @buffers buffers (headers and records) */
size_t pi_pool_bytes(const struct pi_buffer_pool *pool, uint32_t buffers);

#endif
