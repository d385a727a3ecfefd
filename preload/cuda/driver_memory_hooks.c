/*
 * driver_memory_hooks.c - driver wrappers that allocate and free device,
 * managed and page-locked host memory, and the virtual memory management
 * calls behind expandable segments.
 */
#include <errno.h>
#include <string.h>

#include "driver_hook.h"
#include "live_allocations.h"
#include "pool_reserve.h"

/* ---- allocations ---- */

static CUresult mem_alloc(int id, unsigned api, unsigned kind, int flavour, CUdeviceptr *ptr,
                          size_t bytes, unsigned third, CUstream stream, int arity)
{
    void *fn = pi_driver_real(id, flavour);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r;
    uint64_t start = 0;
    int active = pi_cuda_memory_hook_active();
    if (active)
        start = pi_clock_ticks();
    if (arity == 2)
        r = ((CUresult(*)(CUdeviceptr *, size_t))fn)(ptr, bytes);
    else if (id == DRV_cuMemAllocAsync)
        r = ((CUresult(*)(CUdeviceptr *, size_t, CUstream))fn)(ptr, bytes, stream);
    else
        r = ((CUresult(*)(CUdeviceptr *, size_t, unsigned))fn)(ptr, bytes, third);
    if (active)
        pi_cuda_emit_alloc(api, kind, BITS() | (id == DRV_cuMemAllocAsync ? PI_CUDA_ASYNC : 0),
                           r == CUDA_SUCCESS ? (uint64_t)*ptr : 0, bytes, stream, start,
                           r != CUDA_SUCCESS);
    if (active && kind == PI_GPU_ALLOC_POOL && !pi_cuda_nesting_bits())
        pi_pool_used(NULL);
    return r;
}

PI_EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes)
{
    return mem_alloc(DRV_cuMemAlloc, PI_CUDA_API_cuMemAlloc, PI_GPU_ALLOC_DEVICE, 0, ptr, bytes, 0,
                     NULL, 2);
}

static CUresult alloc_async(int flavour, CUdeviceptr *ptr, size_t bytes, CUstream stream)
{
    return mem_alloc(DRV_cuMemAllocAsync, PI_CUDA_API_cuMemAllocAsync, PI_GPU_ALLOC_POOL, flavour,
                     ptr, bytes, 0, stream, 3);
}
FLAVOURS(alloc_async, cuMemAllocAsync, cuMemAllocAsync_ptsz,
         (CUdeviceptr * ptr, size_t bytes, CUstream stream), (ptr, bytes, stream))

static CUresult alloc_from_pool(int flavour, CUdeviceptr *ptr, size_t bytes, CUmemoryPool pool,
                                CUstream stream)
{
    void *fn = pi_driver_real(DRV_cuMemAllocFromPoolAsync, flavour);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_cuda_memory_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    CUresult r = ((CUresult(*)(CUdeviceptr *, size_t, CUmemoryPool, CUstream))fn)(ptr, bytes, pool,
                                                                                  stream);
    if (active) {
        pi_cuda_emit_alloc(PI_CUDA_API_cuMemAllocFromPoolAsync, PI_GPU_ALLOC_POOL,
                           BITS() | PI_CUDA_ASYNC, r == CUDA_SUCCESS ? (uint64_t)*ptr : 0, bytes,
                           stream, start, r != CUDA_SUCCESS);
        if (!pi_cuda_nesting_bits())
            pi_pool_used(pool);
    }
    return r;
}
FLAVOURS(alloc_from_pool, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz,
         (CUdeviceptr * ptr, size_t bytes, CUmemoryPool pool, CUstream stream),
         (ptr, bytes, pool, stream))

PI_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned flags)
{
    return mem_alloc(DRV_cuMemAllocManaged, PI_CUDA_API_cuMemAllocManaged, PI_GPU_ALLOC_MANAGED, 0,
                     ptr, bytes, flags, NULL, 3);
}

/* Host allocations: page-locked, remembered for the copy classification. */
static CUresult host_alloc(int id, unsigned api, void **pp, size_t bytes, unsigned flags, int arity)
{
    void *fn = pi_driver_real(id, 0);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_cuda_memory_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    CUresult r = arity == 2 ? ((CUresult(*)(void **, size_t))fn)(pp, bytes)
                            : ((CUresult(*)(void **, size_t, unsigned))fn)(pp, bytes, flags);
    if (r == CUDA_SUCCESS)
        pi_cuda_pinned_add(*pp, bytes);
    if (active)
        pi_cuda_emit_alloc(api, PI_GPU_ALLOC_PINNED, BITS(),
                           r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*pp : 0, bytes, NULL, start,
                           r != CUDA_SUCCESS);
    return r;
}

PI_EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytes)
{
    return host_alloc(DRV_cuMemAllocHost, PI_CUDA_API_cuMemAllocHost, pp, bytes, 0, 2);
}

PI_EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytes, unsigned flags)
{
    return host_alloc(DRV_cuMemHostAlloc, PI_CUDA_API_cuMemHostAlloc, pp, bytes, flags, 3);
}

PI_EXPORT CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags)
{
    void *fn = pi_driver_real(DRV_cuMemHostRegister, 0);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_cuda_memory_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    CUresult r = ((CUresult(*)(void *, size_t, unsigned))fn)(p, bytes, flags);
    if (r == CUDA_SUCCESS)
        pi_cuda_pinned_add(p, bytes);
    if (active)
        pi_cuda_emit_alloc(PI_CUDA_API_cuMemHostRegister, PI_GPU_ALLOC_REGISTERED, BITS(),
                           (uint64_t)(uintptr_t)p, bytes, NULL, start, r != CUDA_SUCCESS);
    return r;
}

/* Frees: one pointer (and maybe a stream). */
static CUresult mem_free(int id, unsigned api, unsigned kind, int flavour, uint64_t pointer,
                         CUstream stream, int with_stream)
{
    void *fn = pi_driver_real(id, flavour);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_cuda_memory_hook_active() && pointer;
    uint64_t start = active ? pi_clock_ticks() : 0;
    struct pi_live_saved saved;
    int was_live = active && pi_live_forget(pointer, &saved);
    CUresult r = with_stream ? ((CUresult(*)(CUdeviceptr, CUstream))fn)(pointer, stream)
                             : ((CUresult(*)(CUdeviceptr))fn)(pointer);
    if (r != CUDA_SUCCESS && was_live)
        pi_live_restore(&saved);
    if (kind == PI_GPU_ALLOC_PINNED)
        pi_cuda_pinned_remove((const void *)(uintptr_t)pointer);
    if (active)
        pi_cuda_emit_free(api, kind, BITS() | (with_stream ? PI_CUDA_ASYNC : 0), pointer, 0,
                          stream, start, r != CUDA_SUCCESS);
    if (active && kind == PI_GPU_ALLOC_POOL && !pi_cuda_nesting_bits())
        pi_pool_used(NULL);
    return r;
}

PI_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr ptr)
{
    return mem_free(DRV_cuMemFree, PI_CUDA_API_cuMemFree, PI_GPU_ALLOC_DEVICE, 0, ptr, NULL, 0);
}

PI_EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    return mem_free(DRV_cuMemFreeHost, PI_CUDA_API_cuMemFreeHost, PI_GPU_ALLOC_PINNED, 0,
                    (uint64_t)(uintptr_t)p, NULL, 0);
}

static CUresult free_async(int flavour, CUdeviceptr ptr, CUstream stream)
{
    return mem_free(DRV_cuMemFreeAsync, PI_CUDA_API_cuMemFreeAsync, PI_GPU_ALLOC_POOL, flavour,
                    ptr, stream, 1);
}
FLAVOURS(free_async, cuMemFreeAsync, cuMemFreeAsync_ptsz, (CUdeviceptr ptr, CUstream stream),
         (ptr, stream))

/* ---- virtual memory management (expandable segments) ---- */

PI_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                       const CUmemAllocationProp *prop, unsigned long long flags)
{
    void *fn = pi_driver_real(DRV_cuMemCreate, 0);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_cuda_memory_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    CUresult r = ((CUresult(*)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                               unsigned long long))fn)(handle, size, prop, flags);
    if (active)
        pi_cuda_emit_alloc(PI_CUDA_API_cuMemCreate, PI_GPU_ALLOC_VMM, BITS(),
                           r == CUDA_SUCCESS ? (uint64_t)*handle : 0, size, NULL, start,
                           r != CUDA_SUCCESS);
    return r;
}

PI_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    return mem_free(DRV_cuMemRelease, PI_CUDA_API_cuMemRelease, PI_GPU_ALLOC_VMM, 0,
                    (uint64_t)handle, NULL, 0);
}

/* Mapping and unmapping change no physical memory: recorded as calls (sync kind 0). */
PI_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    void *fn = pi_driver_real(DRV_cuMemMap, 0);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    CUresult r = ((CUresult(*)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                               unsigned long long))fn)(ptr, size, offset, handle, flags);
    if (active)
        pi_cuda_emit_sync(PI_CUDA_API_cuMemMap, 0, BITS(), (const void *)(uintptr_t)ptr, start,
                          r != CUDA_SUCCESS);
    return r;
}

PI_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    void *fn = pi_driver_real(DRV_cuMemUnmap, 0);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    CUresult r = ((CUresult(*)(CUdeviceptr, size_t))fn)(ptr, size);
    if (active)
        pi_cuda_emit_sync(PI_CUDA_API_cuMemUnmap, 0, BITS(), (const void *)(uintptr_t)ptr, start,
                          r != CUDA_SUCCESS);
    return r;
}


void pi_driver_memory_wrappers(struct pi_driver_entry *entries)
{
    entries[DRV_cuMemAlloc].wrapper[0] = (void *)cuMemAlloc_v2;
    entries[DRV_cuMemFree].wrapper[0] = (void *)cuMemFree_v2;
    entries[DRV_cuMemAllocAsync].wrapper[0] = (void *)cuMemAllocAsync;
    entries[DRV_cuMemAllocAsync].wrapper[1] = (void *)cuMemAllocAsync_ptsz;
    entries[DRV_cuMemFreeAsync].wrapper[0] = (void *)cuMemFreeAsync;
    entries[DRV_cuMemFreeAsync].wrapper[1] = (void *)cuMemFreeAsync_ptsz;
    entries[DRV_cuMemAllocFromPoolAsync].wrapper[0] = (void *)cuMemAllocFromPoolAsync;
    entries[DRV_cuMemAllocFromPoolAsync].wrapper[1] = (void *)cuMemAllocFromPoolAsync_ptsz;
    entries[DRV_cuMemAllocManaged].wrapper[0] = (void *)cuMemAllocManaged;
    entries[DRV_cuMemAllocHost].wrapper[0] = (void *)cuMemAllocHost_v2;
    entries[DRV_cuMemHostAlloc].wrapper[0] = (void *)cuMemHostAlloc;
    entries[DRV_cuMemFreeHost].wrapper[0] = (void *)cuMemFreeHost;
    entries[DRV_cuMemHostRegister].wrapper[0] = (void *)cuMemHostRegister_v2;
    entries[DRV_cuMemCreate].wrapper[0] = (void *)cuMemCreate;
    entries[DRV_cuMemRelease].wrapper[0] = (void *)cuMemRelease;
    entries[DRV_cuMemMap].wrapper[0] = (void *)cuMemMap;
    entries[DRV_cuMemUnmap].wrapper[0] = (void *)cuMemUnmap;
}
