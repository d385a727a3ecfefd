/*
 * pool_sizing.h - the buffer pool sized to the threads that record: every
 * live thread holds a buffer, so 500 threads need 500 of them whatever the
 * writer does. The writer grows the pool as the threads take it
 * (PROFINJECT_POOL_MB at a time, up to PROFINJECT_POOL_MAX_MB), and a drop
 * that still happens is told with its true cause and the setting that
 * helps. Writer thread only.
 */
#ifndef PI_POOL_SIZING_H
#define PI_POOL_SIZING_H

#include <stdint.h>

/* pi_pool_fit_threads - grow the pool when @threads (live threads that record,
 * each holding a buffer or looking for one) would take most of it */
void pi_pool_fit_threads(uint32_t threads);

/**
 * pi_pool_tell_drops - @count records were dropped for want of a free
 * buffer while @threads needed one each and @retired buffers waited for
 * the writer: the first time, say why (one profinject: line) and which
 * setting helps
 */
void pi_pool_tell_drops(uint64_t count, uint32_t threads, uint32_t retired);

#endif
