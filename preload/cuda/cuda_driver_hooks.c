/*
 * cuda_driver_hooks.c - wrappers for the driver entry points that
 * allocate, copy, launch and synchronise, plus the module and kernel
 * lookups that give launches their names. See cuda_driver_hooks.h.
 *
 * The exported functions below are the wrappers: the legacy flavour under
 * the driver's symbol name (cuMemAlloc_v2), the per-thread-stream flavour
 * under its own (cuLaunchKernel_ptsz). One table says, per entry, its base
 * name, both symbols, the oldest version whose ABI matches, and where the
 * real function of each flavour is.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "cuda_common.h"
#include "cuda_driver_hooks.h"
#include "gpu_timing.h"
#include "hook.h"

#define PI_UNPAREN(...) __VA_ARGS__

/* name, legacy symbol, per-thread symbol, oldest version with this ABI */
#define DRIVER_ENTRIES(X)                                                                         \
    X(cuMemAlloc, cuMemAlloc_v2, NONE, 3020)                                                      \
    X(cuMemFree, cuMemFree_v2, NONE, 3020)                                                        \
    X(cuMemAllocAsync, cuMemAllocAsync, cuMemAllocAsync_ptsz, 11020)                              \
    X(cuMemFreeAsync, cuMemFreeAsync, cuMemFreeAsync_ptsz, 11020)                                 \
    X(cuMemAllocManaged, cuMemAllocManaged, NONE, 6000)                                           \
    X(cuMemAllocHost, cuMemAllocHost_v2, NONE, 3020)                                              \
    X(cuMemHostAlloc, cuMemHostAlloc, NONE, 2020)                                                 \
    X(cuMemFreeHost, cuMemFreeHost, NONE, 2000)                                                   \
    X(cuMemHostRegister, cuMemHostRegister_v2, NONE, 6050)                                        \
    X(cuMemCreate, cuMemCreate, NONE, 10020)                                                      \
    X(cuMemRelease, cuMemRelease, NONE, 10020)                                                    \
    X(cuMemMap, cuMemMap, NONE, 10020)                                                            \
    X(cuMemUnmap, cuMemUnmap, NONE, 10020)                                                        \
    X(cuMemcpy, cuMemcpy, cuMemcpy_ptds, 4000)                                                    \
    X(cuMemcpyAsync, cuMemcpyAsync, cuMemcpyAsync_ptsz, 4000)                                     \
    X(cuMemcpyHtoD, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, 3020)                                  \
    X(cuMemcpyDtoH, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, 3020)                                  \
    X(cuMemcpyDtoD, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, 3020)                                  \
    X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, 3020)                   \
    X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, 3020)                   \
    X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz, 3020)                   \
    X(cuLaunchKernel, cuLaunchKernel, cuLaunchKernel_ptsz, 4000)                                  \
    X(cuLaunchKernelEx, cuLaunchKernelEx, cuLaunchKernelEx_ptsz, 11060)                           \
    X(cuGraphLaunch, cuGraphLaunch, cuGraphLaunch_ptsz, 10000)                                    \
    X(cuStreamSynchronize, cuStreamSynchronize, cuStreamSynchronize_ptsz, 2000)                   \
    X(cuCtxSynchronize, cuCtxSynchronize, NONE, 2000)                                             \
    X(cuEventSynchronize, cuEventSynchronize, NONE, 2000)                                         \
    X(cuModuleGetFunction, cuModuleGetFunction, NONE, 2000)                                       \
    X(cuLibraryGetKernel, cuLibraryGetKernel, NONE, 12000)

#define ENTRY_ID(name, legacy, per_thread, version) DRV_##name,
enum { DRIVER_ENTRIES(ENTRY_ID) DRV_COUNT };
#undef ENTRY_ID

struct driver_entry {
    const char *name;
    const char *symbol[2];
    int min_version;
    void *wrapper[2];
    void *_Atomic real[2];
};

static struct driver_entry entries[DRV_COUNT];

/* The real function of @flavour, found by its symbol when no
 * cuGetProcAddress call has handed it to us yet. */
static void *real_of(int id, int flavour)
{
    void *fn = atomic_load_explicit(&entries[id].real[flavour], memory_order_acquire);
    if (__builtin_expect(fn != NULL, 1))
        return fn;
    const char *symbol = entries[id].symbol[flavour] ? entries[id].symbol[flavour]
                                                     : entries[id].symbol[0];
    fn = pi_cuda_symbol(symbol);
    void *expected = NULL;
    if (fn)
        atomic_compare_exchange_strong(&entries[id].real[flavour], &expected, fn);
    return fn;
}

#define REAL(id, flavour, type) ((type)real_of(id, flavour))
#define BITS() (PI_CUDA_DRIVER | pi_cuda_nesting_bits())
/* nested records carry the runtime call's correlation id */
#define CORRELATION() (pi_cuda_runtime_depth > 0 ? pi_cuda_parent_correlation : pi_cuda_next_correlation())

/* Two exported flavours of one wrapper body: legacy and per-thread stream. */
#define FLAVOURS(body, legacy_name, per_thread_name, params, args)                                \
    PI_EXPORT CUresult CUDAAPI legacy_name params                                                 \
    {                                                                                             \
        return body(0, PI_UNPAREN args);                                                          \
    }                                                                                             \
    PI_EXPORT CUresult CUDAAPI per_thread_name params                                             \
    {                                                                                             \
        return body(1, PI_UNPAREN args);                                                          \
    }
#define ONE_FLAVOUR(body, legacy_name, params, args)                                              \
    PI_EXPORT CUresult CUDAAPI legacy_name params                                                 \
    {                                                                                             \
        return body(0, PI_UNPAREN args);                                                          \
    }

/* ---- allocations ---- */

static CUresult mem_alloc(int id, unsigned api, unsigned kind, int flavour, CUdeviceptr *ptr,
                          size_t bytes, unsigned third, CUstream stream, int arity)
{
    void *fn = real_of(id, flavour);
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

PI_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned flags)
{
    return mem_alloc(DRV_cuMemAllocManaged, PI_CUDA_API_cuMemAllocManaged, PI_GPU_ALLOC_MANAGED, 0,
                     ptr, bytes, flags, NULL, 3);
}

/* Host allocations: page-locked, remembered for the copy classification. */
static CUresult host_alloc(int id, unsigned api, void **pp, size_t bytes, unsigned flags, int arity)
{
    void *fn = real_of(id, 0);
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
    void *fn = real_of(DRV_cuMemHostRegister, 0);
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
    void *fn = real_of(id, flavour);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_cuda_memory_hook_active() && pointer;
    uint64_t start = active ? pi_clock_ticks() : 0;
    CUresult r = with_stream ? ((CUresult(*)(CUdeviceptr, CUstream))fn)(pointer, stream)
                             : ((CUresult(*)(CUdeviceptr))fn)(pointer);
    if (kind == PI_GPU_ALLOC_PINNED)
        pi_cuda_pinned_remove((const void *)(uintptr_t)pointer);
    if (active)
        pi_cuda_emit_free(api, kind, BITS() | (with_stream ? PI_CUDA_ASYNC : 0), pointer, 0,
                          stream, start, r != CUDA_SUCCESS);
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
    void *fn = real_of(DRV_cuMemCreate, 0);
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
    void *fn = real_of(DRV_cuMemMap, 0);
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
    void *fn = real_of(DRV_cuMemUnmap, 0);
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

/* ---- copies ---- */

static CUresult copy(int id, unsigned api, unsigned kind, int flavour, uint64_t dst, uint64_t src,
                     size_t bytes, CUstream stream, int async)
{
    void *fn = real_of(id, flavour);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!pi_hook_active())
        return async ? ((CUresult(*)(uint64_t, uint64_t, size_t, CUstream))fn)(dst, src, bytes, stream)
                     : ((CUresult(*)(uint64_t, uint64_t, size_t))fn)(dst, src, bytes);
    uint64_t start = pi_clock_ticks();
    unsigned nested = pi_cuda_nesting_bits();
    struct pi_gpu_pair pair = {NULL, NULL, 0, 0};
    uint64_t corr = CORRELATION();
    if (!nested)
        pi_gpu_timing_start(&pair, stream, flavour, corr);
    /* the ABI passes pointers and device addresses alike in integer registers */
    CUresult r = async ? ((CUresult(*)(uint64_t, uint64_t, size_t, CUstream))fn)(dst, src, bytes, stream)
                       : ((CUresult(*)(uint64_t, uint64_t, size_t))fn)(dst, src, bytes);
    if (!nested)
        pi_gpu_timing_finish(&pair, corr, r != CUDA_SUCCESS);
    const void *host = kind == PI_GPU_COPY_HTOD   ? (const void *)(uintptr_t)src
                       : kind == PI_GPU_COPY_DTOH ? (const void *)(uintptr_t)dst
                                                  : NULL;
    unsigned bits = BITS() | (async ? PI_CUDA_ASYNC : 0) |
                    (host && pi_cuda_is_pinned(host) ? PI_CUDA_PINNED : 0);
    pi_cuda_emit_copy(api, kind, bits, bytes, corr, stream, start, r != CUDA_SUCCESS);
    return r;
}

#define SYNC_COPY(entry, kind, dst_t, src_t)                                                      \
    static CUresult entry##_body(int flavour, dst_t dst, src_t src, size_t bytes)                 \
    {                                                                                             \
        return copy(DRV_##entry, PI_CUDA_API_##entry, kind, flavour, (uint64_t)(uintptr_t)dst,    \
                    (uint64_t)(uintptr_t)src, bytes, NULL, 0);                                    \
    }
#define ASYNC_COPY(entry, kind, dst_t, src_t)                                                     \
    static CUresult entry##_body(int flavour, dst_t dst, src_t src, size_t bytes, CUstream s)     \
    {                                                                                             \
        return copy(DRV_##entry, PI_CUDA_API_##entry, kind, flavour, (uint64_t)(uintptr_t)dst,    \
                    (uint64_t)(uintptr_t)src, bytes, s, 1);                                       \
    }

SYNC_COPY(cuMemcpy, PI_GPU_COPY_DEFAULT, CUdeviceptr, CUdeviceptr)
SYNC_COPY(cuMemcpyHtoD, PI_GPU_COPY_HTOD, CUdeviceptr, const void *)
SYNC_COPY(cuMemcpyDtoH, PI_GPU_COPY_DTOH, void *, CUdeviceptr)
SYNC_COPY(cuMemcpyDtoD, PI_GPU_COPY_DTOD, CUdeviceptr, CUdeviceptr)
ASYNC_COPY(cuMemcpyAsync, PI_GPU_COPY_DEFAULT, CUdeviceptr, CUdeviceptr)
ASYNC_COPY(cuMemcpyHtoDAsync, PI_GPU_COPY_HTOD, CUdeviceptr, const void *)
ASYNC_COPY(cuMemcpyDtoHAsync, PI_GPU_COPY_DTOH, void *, CUdeviceptr)
ASYNC_COPY(cuMemcpyDtoDAsync, PI_GPU_COPY_DTOD, CUdeviceptr, CUdeviceptr)

FLAVOURS(cuMemcpy_body, cuMemcpy, cuMemcpy_ptds, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n))
FLAVOURS(cuMemcpyHtoD_body, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds,
         (CUdeviceptr d, const void *s, size_t n), (d, s, n))
FLAVOURS(cuMemcpyDtoH_body, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds,
         (void *d, CUdeviceptr s, size_t n), (d, s, n))
FLAVOURS(cuMemcpyDtoD_body, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds,
         (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n))
FLAVOURS(cuMemcpyAsync_body, cuMemcpyAsync, cuMemcpyAsync_ptsz,
         (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
FLAVOURS(cuMemcpyHtoDAsync_body, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz,
         (CUdeviceptr d, const void *s, size_t n, CUstream st), (d, s, n, st))
FLAVOURS(cuMemcpyDtoHAsync_body, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz,
         (void *d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
FLAVOURS(cuMemcpyDtoDAsync_body, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz,
         (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))

/* ---- kernel names ---- */

static uint32_t kernel_name(const void *function)
{
    uint32_t name = pi_cuda_function_name(function);
    if (name || !function)
        return name;
    /* a function we did not see looked up: ask the driver, where it can say */
    static CUresult (*get_name)(const char **, CUfunction);
    if (!get_name)
        get_name = (CUresult(*)(const char **, CUfunction))pi_cuda_symbol("cuFuncGetName");
    const char *text = NULL;
    if (get_name && get_name(&text, (CUfunction)function) == CUDA_SUCCESS && text)
        pi_cuda_remember_function(function, text);
    return pi_cuda_function_name(function);
}

PI_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module,
                                               const char *name)
{
    void *fn = real_of(DRV_cuModuleGetFunction, 0);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = ((CUresult(*)(CUfunction *, CUmodule, const char *))fn)(function, module, name);
    if (r == CUDA_SUCCESS && pi_hook_active())
        pi_cuda_remember_function(*function, name);
    return r;
}

PI_EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *kernel, CUlibrary library,
                                              const char *name)
{
    void *fn = real_of(DRV_cuLibraryGetKernel, 0);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = ((CUresult(*)(CUkernel *, CUlibrary, const char *))fn)(kernel, library, name);
    if (r == CUDA_SUCCESS && pi_hook_active())
        pi_cuda_remember_function(*kernel, name);
    return r;
}

/* ---- launches ---- */

/* A launch inside a runtime launch is that launch: it only lends its
 * kernel name (launches are the hot path; no second record for them). */
#define DRIVER_LAUNCH(id, api, kind, function, stream, call)                                      \
    do {                                                                                          \
        if (!pi_hook_active())                                                                    \
            return call;                                                                          \
        if (pi_cuda_runtime_depth > 0) {                                                          \
            CUresult nested_result = call;                                                        \
            pi_cuda_last_kernel = kernel_name(function);                                          \
            return nested_result;                                                                 \
        }                                                                                         \
        uint64_t start = pi_clock_ticks();                                                        \
        struct pi_gpu_pair pair = {NULL, NULL, 0, 0};                                                \
        uint64_t corr = pi_cuda_next_correlation();                                               \
        pi_gpu_timing_start(&pair, stream, flavour, corr);                                        \
        CUresult r = call;                                                                        \
        pi_gpu_timing_finish(&pair, corr, r != CUDA_SUCCESS);                                     \
        pi_cuda_emit_launch(api, kind, PI_CUDA_DRIVER, corr, kernel_name(function), stream,       \
                            start, r != CUDA_SUCCESS);                                            \
        return r;                                                                                 \
    } while (0)

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

static CUresult launch_body(int flavour, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream stream,
                            void **params, void **extra)
{
    launch_fn real = REAL(DRV_cuLaunchKernel, flavour, launch_fn);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    DRIVER_LAUNCH(DRV_cuLaunchKernel, PI_CUDA_API_cuLaunchKernel, PI_GPU_KERNEL, f, stream,
                  real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra));
}
FLAVOURS(launch_body, cuLaunchKernel, cuLaunchKernel_ptsz,
         (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
          unsigned bz, unsigned shared, CUstream stream, void **params, void **extra),
         (f, gx, gy, gz, bx, by, bz, shared, stream, params, extra))

typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

static CUresult launch_ex_body(int flavour, const CUlaunchConfig *config, CUfunction f,
                               void **params, void **extra)
{
    launch_ex_fn real = REAL(DRV_cuLaunchKernelEx, flavour, launch_ex_fn);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    DRIVER_LAUNCH(DRV_cuLaunchKernelEx, PI_CUDA_API_cuLaunchKernelEx, PI_GPU_KERNEL_EX, f,
                  config ? config->hStream : NULL, real(config, f, params, extra));
}
FLAVOURS(launch_ex_body, cuLaunchKernelEx, cuLaunchKernelEx_ptsz,
         (const CUlaunchConfig *config, CUfunction f, void **params, void **extra),
         (config, f, params, extra))

typedef CUresult (*graph_fn)(CUgraphExec, CUstream);

static CUresult graph_body(int flavour, CUgraphExec graph, CUstream stream)
{
    graph_fn real = REAL(DRV_cuGraphLaunch, flavour, graph_fn);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    DRIVER_LAUNCH(DRV_cuGraphLaunch, PI_CUDA_API_cuGraphLaunch, PI_GPU_GRAPH, NULL, stream,
                  real(graph, stream));
}
FLAVOURS(graph_body, cuGraphLaunch, cuGraphLaunch_ptsz, (CUgraphExec graph, CUstream stream),
         (graph, stream))

/* ---- synchronisation ---- */

static CUresult sync_call(int id, unsigned api, unsigned kind, int flavour, const void *handle,
                          int arity)
{
    void *fn = real_of(id, flavour);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    CUresult r = arity == 0 ? ((CUresult(*)(void))fn)() : ((CUresult(*)(const void *))fn)(handle);
    if (active)
        pi_cuda_emit_sync(api, kind, BITS(), handle, start, r != CUDA_SUCCESS);
    return r;
}

static CUresult stream_sync_body(int flavour, CUstream stream)
{
    return sync_call(DRV_cuStreamSynchronize, PI_CUDA_API_cuStreamSynchronize, PI_GPU_SYNC_STREAM,
                     flavour, stream, 1);
}
FLAVOURS(stream_sync_body, cuStreamSynchronize, cuStreamSynchronize_ptsz, (CUstream stream),
         (stream))

PI_EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    return sync_call(DRV_cuCtxSynchronize, PI_CUDA_API_cuCtxSynchronize, PI_GPU_SYNC_DEVICE, 0,
                     NULL, 0);
}

PI_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent event)
{
    return sync_call(DRV_cuEventSynchronize, PI_CUDA_API_cuEventSynchronize, PI_GPU_SYNC_EVENT, 0,
                     event, 1);
}

/* ---- the table, and resolution through cuGetProcAddress and dlsym ---- */

#define FILL(name, legacy, per_thread, version)                                                   \
    entries[DRV_##name] = (struct driver_entry){                                                  \
        #name, {#legacy, PER_THREAD_SYMBOL_##per_thread}, version,                                \
        {(void *)legacy, PER_THREAD_WRAPPER_##per_thread}, {NULL, NULL}};

static void fill_table(void)
{
#define PER_THREAD_SYMBOL_NONE NULL
#define PER_THREAD_WRAPPER_NONE NULL
#define PER_THREAD_SYMBOL_cuMemAllocAsync_ptsz "cuMemAllocAsync_ptsz"
#define PER_THREAD_WRAPPER_cuMemAllocAsync_ptsz (void *)cuMemAllocAsync_ptsz
#define PER_THREAD_SYMBOL_cuMemFreeAsync_ptsz "cuMemFreeAsync_ptsz"
#define PER_THREAD_WRAPPER_cuMemFreeAsync_ptsz (void *)cuMemFreeAsync_ptsz
#define PER_THREAD_SYMBOL_cuMemcpy_ptds "cuMemcpy_ptds"
#define PER_THREAD_WRAPPER_cuMemcpy_ptds (void *)cuMemcpy_ptds
#define PER_THREAD_SYMBOL_cuMemcpyAsync_ptsz "cuMemcpyAsync_ptsz"
#define PER_THREAD_WRAPPER_cuMemcpyAsync_ptsz (void *)cuMemcpyAsync_ptsz
#define PER_THREAD_SYMBOL_cuMemcpyHtoD_v2_ptds "cuMemcpyHtoD_v2_ptds"
#define PER_THREAD_WRAPPER_cuMemcpyHtoD_v2_ptds (void *)cuMemcpyHtoD_v2_ptds
#define PER_THREAD_SYMBOL_cuMemcpyDtoH_v2_ptds "cuMemcpyDtoH_v2_ptds"
#define PER_THREAD_WRAPPER_cuMemcpyDtoH_v2_ptds (void *)cuMemcpyDtoH_v2_ptds
#define PER_THREAD_SYMBOL_cuMemcpyDtoD_v2_ptds "cuMemcpyDtoD_v2_ptds"
#define PER_THREAD_WRAPPER_cuMemcpyDtoD_v2_ptds (void *)cuMemcpyDtoD_v2_ptds
#define PER_THREAD_SYMBOL_cuMemcpyHtoDAsync_v2_ptsz "cuMemcpyHtoDAsync_v2_ptsz"
#define PER_THREAD_WRAPPER_cuMemcpyHtoDAsync_v2_ptsz (void *)cuMemcpyHtoDAsync_v2_ptsz
#define PER_THREAD_SYMBOL_cuMemcpyDtoHAsync_v2_ptsz "cuMemcpyDtoHAsync_v2_ptsz"
#define PER_THREAD_WRAPPER_cuMemcpyDtoHAsync_v2_ptsz (void *)cuMemcpyDtoHAsync_v2_ptsz
#define PER_THREAD_SYMBOL_cuMemcpyDtoDAsync_v2_ptsz "cuMemcpyDtoDAsync_v2_ptsz"
#define PER_THREAD_WRAPPER_cuMemcpyDtoDAsync_v2_ptsz (void *)cuMemcpyDtoDAsync_v2_ptsz
#define PER_THREAD_SYMBOL_cuLaunchKernel_ptsz "cuLaunchKernel_ptsz"
#define PER_THREAD_WRAPPER_cuLaunchKernel_ptsz (void *)cuLaunchKernel_ptsz
#define PER_THREAD_SYMBOL_cuLaunchKernelEx_ptsz "cuLaunchKernelEx_ptsz"
#define PER_THREAD_WRAPPER_cuLaunchKernelEx_ptsz (void *)cuLaunchKernelEx_ptsz
#define PER_THREAD_SYMBOL_cuGraphLaunch_ptsz "cuGraphLaunch_ptsz"
#define PER_THREAD_WRAPPER_cuGraphLaunch_ptsz (void *)cuGraphLaunch_ptsz
#define PER_THREAD_SYMBOL_cuStreamSynchronize_ptsz "cuStreamSynchronize_ptsz"
#define PER_THREAD_WRAPPER_cuStreamSynchronize_ptsz (void *)cuStreamSynchronize_ptsz
    DRIVER_ENTRIES(FILL)
}

static _Atomic int table_ready;

static void ensure_table(void)
{
    if (!atomic_load_explicit(&table_ready, memory_order_acquire)) {
        fill_table();
        atomic_store_explicit(&table_ready, 1, memory_order_release);
    }
}

/* Keep @real for @flavour of @e; hand out our wrapper when it routes there. */
static void *adopt(struct driver_entry *e, int flavour, void *real)
{
    if (!e->wrapper[flavour] || real == e->wrapper[flavour] || pi_in_self(real))
        return real;
    void *expected = NULL;
    if (atomic_compare_exchange_strong(&e->real[flavour], &expected, real) || expected == real)
        return e->wrapper[flavour];
    return real; /* another implementation already sits behind this wrapper */
}

void *pi_cuda_wrap_driver(const char *name, int version, unsigned long long flags, void *real)
{
    if (!real || !pi_is_cuda_driver_name(name))
        return real;
    ensure_table();
    if (strcmp(name, "cuGetProcAddress") == 0)
        return pi_cuda_wrap_proc_address(version, real);
    for (int i = 0; i < DRV_COUNT; i++) {
        struct driver_entry *e = &entries[i];
        if (strcmp(e->name, name) != 0)
            continue;
        if (version < e->min_version)
            return real; /* an older ABI than our wrapper's */
        int flavour = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && e->symbol[1];
        return adopt(e, flavour, real);
    }
    return real;
}

void *pi_cuda_wrap_symbol(const char *symbol, void *real)
{
    if (!real || !pi_is_cuda_driver_name(symbol))
        return real;
    ensure_table();
    if (strcmp(symbol, "cuGetProcAddress") == 0)
        return pi_cuda_wrap_proc_address(11030, real);
    if (strcmp(symbol, "cuGetProcAddress_v2") == 0)
        return pi_cuda_wrap_proc_address(12000, real);
    for (int i = 0; i < DRV_COUNT; i++)
        for (int flavour = 0; flavour < 2; flavour++)
            if (entries[i].symbol[flavour] && strcmp(entries[i].symbol[flavour], symbol) == 0)
                return adopt(&entries[i], flavour, real);
    return real;
}

typedef CUresult (*proc_address_fn)(const char *, void **, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult *);

/* Pair @real with what adopting it hands out, when that is a wrapper. */
static size_t add_redirect(struct pi_value_redirect *out, size_t n, size_t max, void *real,
                           void *to)
{
    for (size_t i = 0; i < n; i++)
        if (out[i].from == real)
            return n; /* one address, one wrapper: the first pairing stands */
    if (real && to && to != real && n < max)
        out[n++] = (struct pi_value_redirect){real, to};
    return n;
}

size_t pi_cuda_driver_redirects(void *driver, struct pi_value_redirect *out, size_t max)
{
    ensure_table();
    int guard = pi_guard_enter();
    proc_address_fn proc_address = (proc_address_fn)dlsym(driver, "cuGetProcAddress_v2");
    CUresult (*driver_version)(int *) =
        (CUresult(*)(int *))dlsym(driver, "cuDriverGetVersion");
    int version = CUDA_VERSION;
    if (driver_version && driver_version(&version) != CUDA_SUCCESS)
        version = CUDA_VERSION;
    size_t n = 0;
    for (int i = 0; i < DRV_COUNT; i++) {
        struct driver_entry *e = &entries[i];
        for (int flavour = 0; flavour < 2; flavour++) {
            if (!e->wrapper[flavour] || version < e->min_version)
                continue;
            void *by_symbol = dlsym(driver, e->symbol[flavour]);
            void *by_address = NULL;
            CUdriverProcAddressQueryResult status;
            unsigned long long flags = flavour ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                               : CU_GET_PROC_ADDRESS_DEFAULT;
            if (proc_address &&
                proc_address(e->name, &by_address, version, flags, &status) != CUDA_SUCCESS)
                by_address = NULL;
            n = add_redirect(out, n, max, by_symbol, by_symbol ? adopt(e, flavour, by_symbol) : NULL);
            n = add_redirect(out, n, max, by_address,
                             by_address ? adopt(e, flavour, by_address) : NULL);
        }
    }
    /* and the look-up itself, so that later look-ups through a kept pointer are wrapped */
    void *v2 = dlsym(driver, "cuGetProcAddress_v2"), *v1 = dlsym(driver, "cuGetProcAddress");
    n = add_redirect(out, n, max, v2, v2 ? pi_cuda_wrap_proc_address(12000, v2) : NULL);
    n = add_redirect(out, n, max, v1, v1 ? pi_cuda_wrap_proc_address(11030, v1) : NULL);
    pi_guard_restore(guard);
    return n;
}
