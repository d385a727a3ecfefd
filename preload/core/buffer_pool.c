/* buffer_pool.c - lock-free record buffer pool (see buffer_pool.h). */
#include "buffer_pool.h"

#include "raw_syscalls.h"

#include <errno.h>
#include <sys/mman.h>

int pi_pool_init(struct pi_buffer_pool *pool, uint32_t count, uint32_t records_per_buffer)
{
    if (count == 0 || records_per_buffer < 2) {
        errno = EINVAL;
        return -1;
    }
    size_t headers = (sizeof(struct pi_buffer) * count + 63) & ~(size_t)63;
    size_t records = (size_t)count * records_per_buffer * sizeof(struct pi_record);
    size_t size = headers + records;
    void *memory = pi_sys_anonymous_map(size);
    if (memory == MAP_FAILED)
        return -1;
    pool->memory = memory;
    pool->memory_size = size;
    pool->buffers = memory;
    pool->count = count;
    pool->records_per_buffer = records_per_buffer;
    struct pi_record *base = (struct pi_record *)((char *)memory + headers);
    for (uint32_t i = 0; i < count; i++) {
        pool->buffers[i].capacity = records_per_buffer;
        pool->buffers[i].records = base + (size_t)i * records_per_buffer;
    }
    pi_pool_reset(pool);
    return 0;
}

void pi_pool_destroy(struct pi_buffer_pool *pool)
{
    if (pool->memory)
        munmap(pool->memory, pool->memory_size);
    pool->memory = NULL;
    pool->buffers = NULL;
    pool->count = 0;
}

struct pi_buffer *pi_pool_acquire(struct pi_buffer_pool *pool)
{
    if (atomic_load_explicit(&pool->free_count, memory_order_relaxed) == 0)
        return NULL;
    /* First fit: the buffers released most recently by the writer are
     * among the lowest, still in cache and resident. Cycling through the
     * whole pool would page in all of it and fault on every fresh page. */
    for (uint32_t i = 0; i < pool->count; i++) {
        struct pi_buffer *buf = &pool->buffers[i];
        uint32_t expected = PI_BUF_FREE;
        if (atomic_load_explicit(&buf->state, memory_order_relaxed) != PI_BUF_FREE)
            continue;
        /* acquire pairs with pi_pool_release: the writer's reset of the
         * counters is visible before we append. */
        if (atomic_compare_exchange_strong_explicit(&buf->state, &expected, PI_BUF_ACTIVE,
                                                    memory_order_acquire, memory_order_relaxed)) {
            atomic_fetch_sub_explicit(&pool->free_count, 1, memory_order_relaxed);
            /* published to the writer by the owner's first release of committed */
            buf->sequence = atomic_fetch_add_explicit(&pool->next_sequence, 1, memory_order_relaxed);
            return buf;
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
    for (uint32_t i = 0; i < pool->count; i++) {
        pool->buffers[i].flushed = 0;
        atomic_store_explicit(&pool->buffers[i].committed, 0, memory_order_relaxed);
        atomic_store_explicit(&pool->buffers[i].state, PI_BUF_FREE, memory_order_relaxed);
    }
    atomic_store_explicit(&pool->free_count, pool->count, memory_order_release);
}

void pi_pool_sort_by_sequence(const struct pi_buffer_pool *pool, uint32_t *order, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t index = order[i];
        uint64_t key = pool->buffers[index].sequence;
        uint32_t j = i;
        while (j > 0 && pool->buffers[order[j - 1]].sequence > key) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = index;
    }
}
