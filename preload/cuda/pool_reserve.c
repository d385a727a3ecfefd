/*
 * pool_reserve.c - reserves of stream-ordered memory pools (see pool_reserve.h).
 */
#include "pool_reserve.h"

#include <cuda.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/guard.h"
#include "core/process_events.h"
#include "core/recorder.h"
#include "cuda_common.h"

#define MAX_POOLS 32
#define SAMPLE_PERIOD_S 0.1

static struct {
    _Atomic uintptr_t pool;
    unsigned device;
} pools[MAX_POOLS];
static _Atomic unsigned pool_count;
static _Atomic uint64_t next_sample;
static _Atomic int started;
/* the thread's current device's pool, found at its first pool call */
static __thread uintptr_t thread_pool __attribute__((tls_model("initial-exec")));

static struct {
    CUresult (*device)(CUdevice *);
    CUresult (*device_pool)(CUmemoryPool *, CUdevice);
    CUresult (*attribute)(CUmemoryPool, CUmemPool_attribute, void *);
} drv;

static void sample(int force);

static void sample_now(void)
{
    sample(1);
}

/* a fork child holds none of the parent's pools */
static void forget_pools(void)
{
    atomic_store(&pool_count, 0);
    thread_pool = 0;
}

/* Set up on first use: the driver's calls, and every moment a last reading is due. */
static void start(void)
{
    if (atomic_exchange(&started, 1))
        return;
    drv.device = (CUresult(*)(CUdevice *))pi_loaded_symbol("cuCtxGetDevice");
    drv.device_pool = (CUresult(*)(CUmemoryPool *, CUdevice))pi_loaded_symbol("cuDeviceGetMemPool");
    drv.attribute = (CUresult(*)(CUmemoryPool, CUmemPool_attribute, void *))pi_loaded_symbol(
        "cuMemPoolGetAttribute");
    pi_process_event_subscribe(PI_EVENT_WINDOW_CLOSING, sample_now);
    pi_process_event_subscribe(PI_EVENT_BEFORE_EXEC, sample_now);
    pi_process_event_subscribe(PI_EVENT_END, sample_now);
    pi_process_event_subscribe(PI_EVENT_FORK_CHILD, forget_pools);
    /* before the runtime's own exit handlers tear the context down */
    atexit(sample_now);
}

static int known(uintptr_t pool)
{
    unsigned n = atomic_load(&pool_count);
    for (unsigned i = 0; i < n && i < MAX_POOLS; i++)
        if (atomic_load(&pools[i].pool) == pool)
            return 1;
    return 0;
}

static void learn(uintptr_t pool, unsigned device)
{
    if (known(pool))
        return;
    unsigned slot = atomic_fetch_add(&pool_count, 1);
    if (slot < MAX_POOLS) {
        pools[slot].device = device;
        atomic_store(&pools[slot].pool, pool);
    }
}

static void sample(int force)
{
    uint64_t now = pi_clock_ticks(), due = atomic_load_explicit(&next_sample, memory_order_relaxed);
    if (!force && (now < due || !atomic_compare_exchange_strong(
                                    &next_sample, &due,
                                    now + (uint64_t)(SAMPLE_PERIOD_S * pi_recorder_ticks_per_second()))))
        return;
    if (!drv.attribute)
        return;
    unsigned n = atomic_load(&pool_count);
    for (unsigned i = 0; i < n && i < MAX_POOLS; i++) {
        uintptr_t pool = atomic_load(&pools[i].pool);
        cuuint64_t reserved = 0, high = 0;
        if (!pool ||
            drv.attribute((CUmemoryPool)pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) !=
                CUDA_SUCCESS ||
            drv.attribute((CUmemoryPool)pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &high) !=
                CUDA_SUCCESS)
            continue;
        pi_emit(PI_REC_GPU_POOL, (uint16_t)pools[i].device, pi_clock_ticks(), 0, pool, reserved,
                high);
    }
}

void pi_pool_used(const void *pool)
{
    int saved = errno;
    int guard = pi_guard_enter();
    start();
    uintptr_t handle = (uintptr_t)pool;
    CUdevice device = 0;
    if (!handle && !thread_pool && drv.device && drv.device_pool &&
        drv.device(&device) == CUDA_SUCCESS) {
        CUmemoryPool current = NULL;
        if (drv.device_pool(&current, device) == CUDA_SUCCESS && current) {
            thread_pool = (uintptr_t)current;
            learn(thread_pool, (unsigned)device);
        }
    } else if (handle && !known(handle)) {
        if (drv.device)
            drv.device(&device);
        learn(handle, (unsigned)device);
    }
    sample(0);
    pi_guard_restore(guard);
    errno = saved;
}
