/*
 * fake_runtime_memory.c - memory calls of the fake libcudart.so.13 (see
 * fake_runtime.c): device, stream-ordered (the device's current pool or a
 * given one), managed and page-locked memory, and the pool queries.
 * cudaMemPoolAttr and CUmemPool_attribute number the attributes alike.
 */
#include "fake_runtime.h"

static cudaError_t mem_alloc(void **ptr, size_t size)
{
    CALL(0, cuMemAlloc, (CUdeviceptr *)ptr, size);
}

static cudaError_t mem_free(void *ptr)
{
    /* as in the real runtime, freeing NULL still initialises it (the cudaFree(0) idiom) */
    if (!ptr)
        return fake_ready();
    CALL(0, cuMemFree, (CUdeviceptr)ptr);
}

static cudaError_t alloc_async(int flavour, void **ptr, size_t size, cudaStream_t stream)
{
    CALL(flavour, cuMemAllocAsync, (CUdeviceptr *)ptr, size, (CUstream)stream);
}

static cudaError_t alloc_from_pool(int flavour, void **ptr, size_t size, cudaMemPool_t pool,
                                   cudaStream_t stream)
{
    CALL(flavour, cuMemAllocFromPoolAsync, (CUdeviceptr *)ptr, size, (CUmemoryPool)pool,
         (CUstream)stream);
}

static cudaError_t free_async(int flavour, void *ptr, cudaStream_t stream)
{
    CALL(flavour, cuMemFreeAsync, (CUdeviceptr)ptr, (CUstream)stream);
}

static cudaError_t device_mem_pool(cudaMemPool_t *pool, int device)
{
    CALL(0, cuDeviceGetMemPool, (CUmemoryPool *)pool, (CUdevice)device);
}

static cudaError_t pool_get(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    CALL(0, cuMemPoolGetAttribute, (CUmemoryPool)pool, (CUmemPool_attribute)attr, value);
}

static cudaError_t pool_set(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    CALL(0, cuMemPoolSetAttribute, (CUmemoryPool)pool, (CUmemPool_attribute)attr, value);
}

static cudaError_t pool_trim(cudaMemPool_t pool, size_t keep)
{
    CALL(0, cuMemPoolTrimTo, (CUmemoryPool)pool, keep);
}

static cudaError_t alloc_managed(void **ptr, size_t size, unsigned int flags)
{
    CALL(0, cuMemAllocManaged, (CUdeviceptr *)ptr, size, flags);
}

static cudaError_t alloc_host(void **ptr, size_t size)
{
    CALL(0, cuMemAllocHost, ptr, size);
}

static cudaError_t host_alloc(void **ptr, size_t size, unsigned int flags)
{
    CALL(0, cuMemHostAlloc, ptr, size, flags);
}

static cudaError_t free_host(void *ptr)
{
    CALL(0, cuMemFreeHost, ptr);
}

static cudaError_t host_register(void *ptr, size_t size, unsigned int flags)
{
    CALL(0, cuMemHostRegister, ptr, size, flags);
}

static cudaError_t host_unregister(void *ptr)
{
    CALL(0, cuMemHostUnregister, ptr);
}

EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
    return mem_alloc(ptr, size);
}

EXPORT cudaError_t cudaFree(void *ptr)
{
    return mem_free(ptr);
}

EXPORT cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
    return alloc_async(0, ptr, size, stream);
}

EXPORT cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, cudaStream_t stream)
{
    return alloc_async(1, ptr, size, stream);
}

EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool,
                                           cudaStream_t stream)
{
    return alloc_from_pool(0, ptr, size, pool, stream);
}

EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool,
                                                cudaStream_t stream)
{
    return alloc_from_pool(1, ptr, size, pool, stream);
}

EXPORT cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    return free_async(0, ptr, stream);
}

EXPORT cudaError_t cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream)
{
    return free_async(1, ptr, stream);
}

EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device)
{
    return device_mem_pool(pool, device);
}

EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    return device_mem_pool(pool, device);
}

EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr,
                                           void *value)
{
    return pool_get(pool, attr, value);
}

EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr,
                                           void *value)
{
    return pool_set(pool, attr, value);
}

EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    return pool_trim(pool, keep);
}

EXPORT cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    return alloc_managed(ptr, size, flags);
}

EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return alloc_host(ptr, size);
}

EXPORT cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    return host_alloc(ptr, size, flags);
}

EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    return free_host(ptr);
}

EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    return host_register(ptr, size, flags);
}

EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
    return host_unregister(ptr);
}
