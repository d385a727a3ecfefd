/*
 * fake_memory.c - device, managed and page-locked memory of the fake driver,
 * stream-ordered memory pools, and the virtual memory management calls.
 *
 * Pools behave as the driver documents them (cuda.h, cuMemPoolTrimTo and
 * CU_MEMPOOL_ATTR_*): a freed block stays reserved by its pool and is handed
 * out again (the block freed last first, at the same address) until the
 * pool is trimmed; the pool's reserve only grows by new blocks.
 * ReservedMemHigh and UsedMemHigh are high-water marks that a caller resets
 * by setting them to 0. Blocks are rounded up to 2 MiB of reserve.
 *
 * The device has FAKE_CUDA_DEVICE_MB of memory (default 81920, an 80 GiB
 * GPU): device allocations beyond it fail with CUDA_ERROR_OUT_OF_MEMORY, as
 * a full device's do, and cuMemGetInfo says what is free of it.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"

#define POOL_GRANULE (2u << 20)
#define POOL_BLOCKS 4096

struct pool_block {
    uint64_t address;
    size_t size; /* as asked */
    int live;
};

struct fake_pool {
    pthread_mutex_t lock;
    struct pool_block blocks[POOL_BLOCKS];
    size_t count;
    uint64_t reserved, reserved_high, used, used_high;
};

static struct fake_pool default_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};
static struct fake_pool *current_pool = &default_pool;

static size_t rounded(size_t bytes)
{
    return (bytes + POOL_GRANULE - 1) / POOL_GRANULE * POOL_GRANULE;
}

/* ---- device memory ---- */

static _Atomic uint64_t device_used; /* bytes of device allocations live */

static uint64_t device_total(void)
{
    const char *mb = getenv("FAKE_CUDA_DEVICE_MB");
    return (mb && *mb ? strtoull(mb, NULL, 10) : 81920) << 20;
}

static CUresult mem_alloc(CUdeviceptr *dptr, size_t bytes)
{
    if (atomic_load(&device_used) + bytes > device_total())
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    atomic_fetch_add(&device_used, malloc_usable_size(p));
    *dptr = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

static CUresult mem_free(CUdeviceptr dptr)
{
    atomic_fetch_sub(&device_used, malloc_usable_size((void *)dptr));
    free((void *)dptr);
    return CUDA_SUCCESS;
}

static CUresult mem_get_info(size_t *free_bytes, size_t *total_bytes)
{
    uint64_t total = device_total(), used = atomic_load(&device_used);
    *free_bytes = used < total ? total - used : 0;
    *total_bytes = total;
    return CUDA_SUCCESS;
}

static CUresult mem_alloc_managed(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
    (void)flags;
    return mem_alloc(dptr, bytes);
}

/* ---- stream-ordered pools ---- */

static CUresult pool_alloc(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream stream)
{
    (void)stream;
    struct fake_pool *p = pool ? (struct fake_pool *)pool : current_pool;
    pthread_mutex_lock(&p->lock);
    struct pool_block *reuse = NULL;
    for (size_t i = p->count; i-- > 0;)
        if (!p->blocks[i].live && rounded(p->blocks[i].size) == rounded(bytes)) {
            reuse = &p->blocks[i];
            break;
        }
    CUresult r = CUDA_SUCCESS;
    if (!reuse && p->count < POOL_BLOCKS) {
        reuse = &p->blocks[p->count];
        CUdeviceptr address = 0;
        if (mem_alloc(&address, rounded(bytes)) == CUDA_SUCCESS) {
            reuse->address = address;
            p->count++;
            p->reserved += rounded(bytes);
            if (p->reserved > p->reserved_high)
                p->reserved_high = p->reserved;
        } else {
            reuse = NULL;
        }
    }
    if (reuse) {
        /* the block freed last is the one handed out again, at its address */
        struct pool_block block = *reuse;
        memmove(reuse, reuse + 1, (size_t)(&p->blocks[p->count - 1] - reuse) * sizeof(*reuse));
        block.size = bytes;
        block.live = 1;
        p->blocks[p->count - 1] = block;
        p->used += rounded(bytes);
        if (p->used > p->used_high)
            p->used_high = p->used;
        *dptr = block.address;
    } else {
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

/* A block of any pool goes back to it; anything else is freed. */
static CUresult pool_free(CUdeviceptr dptr, CUstream stream)
{
    (void)stream;
    struct fake_pool *p = current_pool;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < p->count; i++)
        if (p->blocks[i].live && p->blocks[i].address == dptr) {
            struct pool_block block = p->blocks[i];
            memmove(&p->blocks[i], &p->blocks[i + 1], (p->count - i - 1) * sizeof(block));
            block.live = 0;
            p->blocks[p->count - 1] = block;
            p->used -= rounded(block.size);
            pthread_mutex_unlock(&p->lock);
            return CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&p->lock);
    return mem_free(dptr);
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
    return pool_alloc(dptr, bytes, NULL, stream);
}

static CUresult pool_trim(CUmemoryPool pool, size_t keep)
{
    struct fake_pool *p = (struct fake_pool *)pool;
    pthread_mutex_lock(&p->lock);
    size_t kept = 0;
    for (size_t i = 0; i < p->count; i++) {
        struct pool_block *b = &p->blocks[i];
        if (!b->live && p->reserved > keep) {
            p->reserved -= rounded(b->size);
            mem_free(b->address);
        } else {
            p->blocks[kept++] = *b;
        }
    }
    p->count = kept;
    pthread_mutex_unlock(&p->lock);
    return CUDA_SUCCESS;
}

static CUresult pool_get_attribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    struct fake_pool *p = (struct fake_pool *)pool;
    pthread_mutex_lock(&p->lock);
    uint64_t v = attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ? p->reserved
                 : attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH  ? p->reserved_high
                 : attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT   ? p->used
                 : attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH      ? p->used_high
                                                              : 0;
    pthread_mutex_unlock(&p->lock);
    *(cuuint64_t *)value = v;
    return CUDA_SUCCESS;
}

/* Only the high-water marks can be set, and only to 0: back to the current value. */
static CUresult pool_set_attribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    struct fake_pool *p = (struct fake_pool *)pool;
    if (*(cuuint64_t *)value != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&p->lock);
    if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
        p->reserved_high = p->reserved;
    else if (attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH)
        p->used_high = p->used;
    pthread_mutex_unlock(&p->lock);
    return CUDA_SUCCESS;
}

static CUresult device_mem_pool(CUmemoryPool *pool, CUdevice device)
{
    if (device != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *pool = (CUmemoryPool)current_pool;
    return CUDA_SUCCESS;
}

/* ---- page-locked host memory ---- */

static CUresult host_alloc(void **pp, size_t bytes, unsigned int flags)
{
    (void)flags;
    *pp = malloc(bytes ? bytes : 1);
    return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult alloc_host(void **pp, size_t bytes)
{
    return host_alloc(pp, bytes, 0);
}

static CUresult free_host(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

static CUresult host_register(void *p, size_t bytes, unsigned int flags)
{
    (void)p, (void)bytes, (void)flags;
    return CUDA_SUCCESS;
}

static CUresult host_unregister(void *p)
{
    (void)p;
    return CUDA_SUCCESS;
}

/* ---- virtual memory management, as expandable segments use it ---- */

static CUresult mem_create(CUmemGenericAllocationHandle *handle, size_t size,
                           const CUmemAllocationProp *prop, unsigned long long flags)
{
    (void)prop, (void)flags;
    size_t *h = malloc(sizeof(size_t));
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *h = size;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return CUDA_SUCCESS;
}

static CUresult mem_release(CUmemGenericAllocationHandle handle)
{
    free((void *)(uintptr_t)handle);
    return CUDA_SUCCESS;
}

/* Address space only: no memory behind it until mapped. */
static CUresult address_reserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                unsigned long long flags)
{
    (void)alignment, (void)addr, (void)flags;
    return mem_alloc(ptr, size);
}

static CUresult address_free(CUdeviceptr ptr, size_t size)
{
    (void)size;
    return mem_free(ptr);
}

static CUresult mem_map(CUdeviceptr ptr, size_t size, size_t offset,
                        CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    (void)ptr, (void)size, (void)offset, (void)handle, (void)flags;
    return CUDA_SUCCESS;
}

static CUresult mem_unmap(CUdeviceptr ptr, size_t size)
{
    (void)ptr, (void)size;
    return CUDA_SUCCESS;
}

static CUresult mem_set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                               size_t count)
{
    (void)ptr, (void)size, (void)desc, (void)count;
    return CUDA_SUCCESS;
}

/* ---- exported symbols: thin wrappers ---- */

EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    return mem_alloc(dptr, bytes);
}
EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    return mem_free(dptr);
}
EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    return mem_get_info(free_bytes, total_bytes);
}
EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
    return alloc_async(dptr, bytes, stream);
}
EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
    return alloc_async(dptr, bytes, stream);
}
EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
                                                CUstream stream)
{
    return pool_alloc(dptr, bytes, pool, stream);
}
EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes,
                                                     CUmemoryPool pool, CUstream stream)
{
    return pool_alloc(dptr, bytes, pool, stream);
}
EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    return pool_free(dptr, stream);
}
EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
    return pool_free(dptr, stream);
}
EXPORT CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    return pool_trim(pool, keep);
}
EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                              void *value)
{
    return pool_get_attribute(pool, attr, value);
}
EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                              void *value)
{
    return pool_set_attribute(pool, attr, value);
}
EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice device)
{
    return device_mem_pool(pool, device);
}
EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice device)
{
    return device_mem_pool(pool, device);
}
EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
    return mem_alloc_managed(dptr, bytes, flags);
}
EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytes)
{
    return alloc_host(pp, bytes);
}
EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    return host_alloc(pp, bytes, flags);
}
EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    return free_host(p);
}
EXPORT CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
    return host_register(p, bytes, flags);
}
EXPORT CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    return host_unregister(p);
}
EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                    const CUmemAllocationProp *prop, unsigned long long flags)
{
    return mem_create(handle, size, prop, flags);
}
EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    return mem_release(handle);
}
EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                            CUdeviceptr addr, unsigned long long flags)
{
    return address_reserve(ptr, size, alignment, addr, flags);
}
EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    return address_free(ptr, size);
}
EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                 CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    return mem_map(ptr, size, offset, handle, flags);
}
EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    return mem_unmap(ptr, size);
}
EXPORT CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                       size_t count)
{
    return mem_set_access(ptr, size, desc, count);
}

#define E(name, version, fn, ptsz) {name, version, (void *)(fn), (void *)(ptsz)}
const struct fake_entry fake_memory_entries[] = {
    E("cuMemAlloc", 3020, mem_alloc, NULL),
    E("cuMemFree", 3020, mem_free, NULL),
    E("cuMemGetInfo", 3020, mem_get_info, NULL),
    E("cuMemAllocAsync", 11020, alloc_async, alloc_async),
    E("cuMemAllocFromPoolAsync", 11020, pool_alloc, pool_alloc),
    E("cuMemFreeAsync", 11020, pool_free, pool_free),
    E("cuMemPoolTrimTo", 11020, pool_trim, NULL),
    E("cuMemPoolGetAttribute", 11020, pool_get_attribute, NULL),
    E("cuMemPoolSetAttribute", 11020, pool_set_attribute, NULL),
    E("cuDeviceGetMemPool", 11020, device_mem_pool, NULL),
    E("cuDeviceGetDefaultMemPool", 11020, device_mem_pool, NULL),
    E("cuMemAllocManaged", 6000, mem_alloc_managed, NULL),
    E("cuMemAllocHost", 3020, alloc_host, NULL),
    E("cuMemHostAlloc", 2020, host_alloc, NULL),
    E("cuMemFreeHost", 2000, free_host, NULL),
    E("cuMemHostRegister", 6050, host_register, NULL),
    E("cuMemHostUnregister", 4000, host_unregister, NULL),
    E("cuMemCreate", 10020, mem_create, NULL),
    E("cuMemRelease", 10020, mem_release, NULL),
    E("cuMemAddressReserve", 10020, address_reserve, NULL),
    E("cuMemAddressFree", 10020, address_free, NULL),
    E("cuMemMap", 10020, mem_map, NULL),
    E("cuMemUnmap", 10020, mem_unmap, NULL),
    E("cuMemSetAccess", 10020, mem_set_access, NULL),
    {NULL, 0, NULL, NULL},
};
#undef E
