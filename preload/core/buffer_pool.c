/* buffer_pool.c - lock-free record buffer pool (see buffer_pool.h). */
#include "buffer_pool.h"

#include "raw_syscalls.h"

#include <errno.h>
#include <sys/mman.h>

static size_t headers_size(uint32_t buffers)
{
    return (sizeof(struct pi_buffer) * buffers + 63) & ~(size_t)63;
}

size_t pi_pool_bytes(const struct pi_buffer_pool *pool, uint32_t buffers)
{
    uint32_t chunks = (buffers + pool->chunk_buffers - 1) / pool->chunk_buffers;
    return (size_t)chunks * pool->chunk_size;
}

/* Map chunk @index and make its buffers FREE; published by the caller. */
static int map_chunk(struct pi_buffer_pool *pool, uint32_t index)
{
    void *memory = pi_sys_anonymous_map(pool->chunk_size);
    if (memory == MAP_FAILED)
        return -1;
    struct pi_buffer *buffers = memory;
    struct pi_record *base =
        (struct pi_record *)((char *)memory + headers_size(pool->chunk_buffers));
    for (uint32_t i = 0; i < pool->chunk_buffers; i++) {
        buffers[i].capacity = pool->records_per_buffer;
        buffers[i].records = base + (size_t)i * pool->records_per_buffer;
        /* anonymous memory is zero: FREE, nothing committed or flushed */
    }
    pool->chunks[index] = buffers;
    return 0;
}

int pi_pool_init(struct pi_buffer_pool *pool, uint32_t count, uint32_t max_count,
                 uint32_t records_per_buffer)
{
    if (count == 0 || records_per_buffer < 2) {
        errno = EINVAL;
        return -1;
    }
    uint32_t chunks = max_count / count;
    pool->chunk_buffers = count;
    pool->max_count = count * (chunks < 1 ? 1 : chunks > PI_POOL_MAX_CHUNKS ? PI_POOL_MAX_CHUNKS
                                                                           : chunks);
    pool->records_per_buffer = records_per_buffer;
    pool->chunk_size =
        headers_size(count) + (size_t)count * records_per_buffer * sizeof(struct pi_record);
    for (uint32_t i = 0; i < PI_POOL_MAX_CHUNKS; i++)
        pool->chunks[i] = NULL;
    if (map_chunk(pool, 0) != 0)
        return -1;
    atomic_store_explicit(&pool->next_sequence, 0, memory_order_relaxed);
    atomic_store_explicit(&pool->growing, 0, memory_order_relaxed);
    atomic_store_explicit(&pool->free_count, count, memory_order_relaxed);
    atomic_store_explicit(&pool->count, count, memory_order_release);
    return 0;
}

void pi_pool_destroy(struct pi_buffer_pool *pool)
{
    for (uint32_t i = 0; i < PI_POOL_MAX_CHUNKS; i++) {
        if (pool->chunks[i])
            munmap(pool->chunks[i], pool->chunk_size);
        pool->chunks[i] = NULL;
    }
    atomic_store(&pool->count, 0);
    atomic_store(&pool->free_count, 0);
}

int pi_pool_grow(struct pi_buffer_pool *pool, uint32_t threads)
{
    uint32_t count = atomic_load_explicit(&pool->count, memory_order_relaxed);
    if (count >= pool->max_count || (uint64_t)threads * 4 < (uint64_t)count * 3)
        return 0;
    uint32_t idle = 0;
    if (!atomic_compare_exchange_strong_explicit(&pool->growing, &idle, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return 0;
    /* another grower may have finished between our look and our turn */
    count = atomic_load_explicit(&pool->count, memory_order_relaxed);
    int grew = 0;
    if (count < pool->max_count && (uint64_t)threads * 4 >= (uint64_t)count * 3) {
        grew = map_chunk(pool, count / pool->chunk_buffers) == 0 ? 1 : -1;
        if (grew > 0) {
            /* release: who reads the new count sees the chunk's pointer and its buffers */
            atomic_store_explicit(&pool->count, count + pool->chunk_buffers,
                                  memory_order_release);
            atomic_fetch_add_explicit(&pool->free_count, pool->chunk_buffers,
                                      memory_order_relaxed);
        }
    }
    int saved = errno;
    atomic_store_explicit(&pool->growing, 0, memory_order_release);
    errno = saved;
    return grew;
}

struct pi_buffer *pi_pool_acquire(struct pi_buffer_pool *pool)
{
    if (atomic_load_explicit(&pool->free_count, memory_order_relaxed) == 0)
        return NULL;
    /* First fit: the buffers released most recently by the writer are
     * among the lowest, still in cache and resident. Cycling through the
     * whole pool would page in all of it and fault on every fresh page. */
    uint32_t chunks = pi_pool_count(pool) / pool->chunk_buffers;
    for (uint32_t c = 0; c < chunks; c++) {
        struct pi_buffer *chunk = pool->chunks[c];
        for (uint32_t i = 0; i < pool->chunk_buffers; i++) {
            struct pi_buffer *buf = &chunk[i];
            uint32_t expected = PI_BUF_FREE;
            if (atomic_load_explicit(&buf->state, memory_order_relaxed) != PI_BUF_FREE)
                continue;
            /* acquire pairs with pi_pool_release: the writer's reset of the
             * counters is visible before we append. */
            if (atomic_compare_exchange_strong_explicit(&buf->state, &expected, PI_BUF_ACTIVE,
                                                        memory_order_acquire,
                                                        memory_order_relaxed)) {
                atomic_fetch_sub_explicit(&pool->free_count, 1, memory_order_relaxed);
                /* published to the writer by the owner's first release of committed */
                buf->sequence =
                    atomic_fetch_add_explicit(&pool->next_sequence, 1, memory_order_relaxed);
                return buf;
            }
        }
    }
    return NULL;
}

void pi_pool_retire(struct pi_buffer_pool *pool, struct pi_buffer *buf)
{
    (void)pool;
    /* release: every committed record is visible to a writer that sees RETIRED */
    atomic_store_explicit(&buf->state, PI_BUF_RETIRED, memory_order_release);
}

void pi_pool_release(struct pi_buffer_pool *pool, struct pi_buffer *buf)
{
    buf->flushed = 0;
    atomic_store_explicit(&buf->committed, 0, memory_order_relaxed);
    atomic_store_explicit(&buf->state, PI_BUF_FREE, memory_order_release);
    atomic_fetch_add_explicit(&pool->free_count, 1, memory_order_relaxed);
}

void pi_pool_reset(struct pi_buffer_pool *pool)
{
    uint32_t count = pi_pool_count(pool);
    for (uint32_t i = 0; i < count; i++) {
        struct pi_buffer *buf = pi_pool_buffer(pool, i);
        buf->flushed = 0;
        atomic_store_explicit(&buf->committed, 0, memory_order_relaxed);
        atomic_store_explicit(&buf->state, PI_BUF_FREE, memory_order_relaxed);
    }
    atomic_store_explicit(&pool->growing, 0, memory_order_relaxed); /* a grower's, gone */
    atomic_store_explicit(&pool->free_count, count, memory_order_release);
}

/* Restore the heap below @root of @n entries: the largest sequence on top. */
static void sift_down(uint32_t *order, uint64_t *keys, uint32_t root, uint32_t n)
{
    for (;;) {
        uint32_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && keys[child + 1] > keys[child])
            child++;
        if (keys[root] >= keys[child])
            return;
        uint64_t key = keys[root];
        keys[root] = keys[child];
        keys[child] = key;
        uint32_t index = order[root];
        order[root] = order[child];
        order[child] = index;
        root = child;
    }
}

void pi_pool_sort_by_sequence(struct pi_buffer_pool *pool, uint32_t *order, uint64_t *keys,
                              uint32_t n)
{
    /* heapsort: in place, n log n however many threads hold buffers */
    for (uint32_t i = 0; i < n; i++)
        keys[i] = pi_pool_buffer(pool, order[i])->sequence;
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(order, keys, i, n);
    for (uint32_t end = n; end-- > 1;) {
        uint64_t key = keys[0];
        keys[0] = keys[end];
        keys[end] = key;
        uint32_t index = order[0];
        order[0] = order[end];
        order[end] = index;
        sift_down(order, keys, 0, end);
    }
}
