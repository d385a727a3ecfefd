/* pool_sizing.c - the buffer pool grown with the threads (see pool_sizing.h). */
#include "pool_sizing.h"

#include <errno.h>
#include <string.h>

#include "recorder_internal.h"
#include "diagnostics.h"

static unsigned megabytes(uint32_t buffers)
{
    return (unsigned)((pi_pool_bytes(&pi_rec.pool, buffers) + (1u << 19)) >> 20);
}

void pi_pool_fit_threads(uint32_t threads)
{
    static int told;
    /* as many chunks as the threads need now: a burst of new threads does
     * not wait a pass for each */
    int grew;
    while ((grew = pi_pool_grow(&pi_rec.pool, threads)) > 0)
        ;
    if (grew < 0 && !told++)
        pi_diag("cannot map %u MB more of trace buffers for the program's threads (%s); "
                "threads that find no buffer drop their records",
                megabytes(pi_rec.pool.chunk_buffers), strerror(errno));
}

void pi_pool_tell_drops(uint64_t count, uint32_t threads, uint32_t retired)
{
    static int told;
    if (told++)
        return;
    struct pi_buffer_pool *pool = &pi_rec.pool;
    uint32_t buffers = pi_pool_count(pool);
    if ((uint64_t)threads * 4 >= (uint64_t)buffers * 3 && buffers >= pool->max_count)
        pi_diag("records dropped (%llu at first; the trace counts them all): the program's "
                "%u live threads need a trace buffer each, and the pool has %u (%u MB, the most "
                "PROFINJECT_POOL_MAX_MB allows); raise PROFINJECT_POOL_MAX_MB (or lower "
                "PROFINJECT_BUFFER_KB) for this many threads",
                (unsigned long long)count, threads, buffers, megabytes(buffers));
    else if ((uint64_t)retired * 4 >= buffers)
        pi_diag("records dropped (%llu at first; the trace counts them all): the writer fell "
                "behind (%u of the %u trace buffers waited to be written); a larger "
                "PROFINJECT_POOL_MB absorbs longer bursts, a lower PROFINJECT_ZSTD_LEVEL or a "
                "faster disk lets the writer keep up",
                (unsigned long long)count, retired, buffers);
    else
        pi_diag("records dropped (%llu at first; the trace counts them all): the program's "
                "threads (%u live) took trace buffers faster than the pool grew for them (by "
                "PROFINJECT_POOL_MB at a time, %u buffers now); a larger PROFINJECT_POOL_MB "
                "starts with room for them",
                (unsigned long long)count, threads, buffers);
}
