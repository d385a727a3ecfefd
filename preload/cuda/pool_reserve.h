/*
 * pool_reserve.h - what stream-ordered memory pools (cudaMallocAsync and
 * PyTorch's backend:cudaMallocAsync) hold in reserve (pool_reserve.c).
 *
 * A pool keeps freed memory reserved for later allocations, so the device
 * memory it takes is its reserve, not the sum of live allocations. The
 * driver says both the reserve and its high-water mark
 * (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT / _HIGH, cuda.h); PyTorch reports
 * the latter as max_memory_reserved() for that back-end. Reading them
 * changes nothing in the pool.
 */
#ifndef PI_POOL_RESERVE_H
#define PI_POOL_RESERVE_H

/**
 * pi_pool_used - an allocation or free of pool @pool (NULL: the current
 * device's current pool, as cudaMallocAsync uses) just happened
 *
 * Learns the pool the first time, and reads the reserve of every pool
 * known at most every 100 ms (GPU_POOL records); again when a window
 * closes, before exec and at exit.
 */
void pi_pool_used(const void *pool);

#endif
