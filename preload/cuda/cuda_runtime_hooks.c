/*
 * cuda_runtime_hooks.c - the CUDA runtime API (libcudart), interposed by
 * symbol: allocations, launches, synchronisation, the device count, and the
 * entry points through which applications fetch driver functions (copies
 * and sets: cuda_runtime_copy_hooks.c). The per-thread-default-stream
 * flavours (_ptsz, _ptds) that code built with --default-stream per-thread
 * calls are hooked alongside.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <string.h>

#include "entry_points.h"
#include "kernel_names.h"
#include "live_allocations.h"
#include "pool_reserve.h"
#include "runtime_hook.h"

/* ---- allocations ---- */

typedef cudaError_t (*alloc_fn)(void **, size_t);

static cudaError_t record_alloc(unsigned api, unsigned kind, alloc_fn real, void **ptr, size_t size)
{
    if (!pi_cuda_memory_hook_active())
        return real(ptr, size);
    uint64_t start = pi_clock_ticks();
    ENTER();
    cudaError_t r = real(ptr, size);
    LEAVE();
    if (r == cudaSuccess && (kind == PI_GPU_ALLOC_PINNED))
        pi_cuda_pinned_add(*ptr, size);
    pi_cuda_emit_alloc(api, kind, 0, r == cudaSuccess ? (uint64_t)(uintptr_t)*ptr : 0, size, NULL,
                       start, r != cudaSuccess);
    return r;
}

PI_EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
    RUNTIME_REAL(alloc_fn, cudaMalloc);
    return record_alloc(PI_CUDA_API_cudaMalloc, PI_GPU_ALLOC_DEVICE, cudaMalloc_real, ptr, size);
}

PI_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    RUNTIME_REAL(alloc_fn, cudaMallocHost);
    return record_alloc(PI_CUDA_API_cudaMallocHost, PI_GPU_ALLOC_PINNED, cudaMallocHost_real, ptr,
                        size);
}

/* Three-argument allocations: managed (flags), pinned (flags), async (stream). */
#define ALLOC3_HOOK(name, api, kind, third_t, is_stream)                                          \
    PI_EXPORT cudaError_t name(void **ptr, size_t size, third_t third)                            \
    {                                                                                             \
        typedef cudaError_t (*fn)(void **, size_t, third_t);                                      \
        RUNTIME_REAL(fn, name);                                                                   \
        if (!pi_cuda_memory_hook_active())                                                                    \
            return name##_real(ptr, size, third);                                                 \
        uint64_t start = pi_clock_ticks();                                                        \
        ENTER();                                                                                  \
        cudaError_t r = name##_real(ptr, size, third);                                            \
        LEAVE();                                                                                  \
        if (r == cudaSuccess && kind == PI_GPU_ALLOC_PINNED)                                      \
            pi_cuda_pinned_add(*ptr, size);                                                       \
        pi_cuda_emit_alloc(api, kind, is_stream ? PI_CUDA_ASYNC : 0,                              \
                           r == cudaSuccess ? (uint64_t)(uintptr_t)*ptr : 0, size,                \
                           is_stream ? (const void *)(uintptr_t)third : NULL, start,              \
                           r != cudaSuccess);                                                     \
        if (kind == PI_GPU_ALLOC_POOL)                                                            \
            pi_pool_used(NULL);                                                                   \
        return r;                                                                                 \
    }

ALLOC3_HOOK(cudaMallocManaged, PI_CUDA_API_cudaMallocManaged, PI_GPU_ALLOC_MANAGED, unsigned, 0)
ALLOC3_HOOK(cudaHostAlloc, PI_CUDA_API_cudaHostAlloc, PI_GPU_ALLOC_PINNED, unsigned, 0)
ALLOC3_HOOK(cudaMallocAsync, PI_CUDA_API_cudaMallocAsync, PI_GPU_ALLOC_POOL, cudaStream_t, 1)
ALLOC3_HOOK(cudaMallocAsync_ptsz, PI_CUDA_API_cudaMallocAsync, PI_GPU_ALLOC_POOL, cudaStream_t, 1)

#define FREE_HOOK(name, api, kind, params, args, pointer, stream, bits)                           \
    PI_EXPORT cudaError_t name params                                                             \
    {                                                                                             \
        typedef cudaError_t(*fn) params;                                                          \
        RUNTIME_REAL(fn, name);                                                                   \
        if (!pi_cuda_memory_hook_active() || !(pointer))                                                      \
            return name##_real args;                                                              \
        uint64_t start = pi_clock_ticks();                                                        \
        struct pi_live_saved saved;                                                               \
        int was_live = pi_live_forget((uint64_t)(uintptr_t)(pointer), &saved);                    \
        ENTER();                                                                                  \
        cudaError_t r = name##_real args;                                                         \
        LEAVE();                                                                                  \
        if (r != cudaSuccess && was_live)                                                         \
            pi_live_restore(&saved);                                                              \
        if (pi_gpu_alloc_on_host(kind))                                                           \
            pi_cuda_pinned_remove(pointer);                                                       \
        pi_cuda_emit_free(api, kind, bits, (uint64_t)(uintptr_t)(pointer), 0, stream, start,      \
                          r != cudaSuccess);                                                      \
        if (kind == PI_GPU_ALLOC_POOL)                                                            \
            pi_pool_used(NULL);                                                                   \
        return r;                                                                                 \
    }

FREE_HOOK(cudaFree, PI_CUDA_API_cudaFree, PI_GPU_ALLOC_DEVICE, (void *p), (p), p, NULL, 0)
FREE_HOOK(cudaFreeHost, PI_CUDA_API_cudaFreeHost, PI_GPU_ALLOC_PINNED, (void *p), (p), p, NULL, 0)
FREE_HOOK(cudaHostUnregister, PI_CUDA_API_cudaHostUnregister, PI_GPU_ALLOC_REGISTERED, (void *p),
          (p), p, NULL, 0)
FREE_HOOK(cudaFreeAsync, PI_CUDA_API_cudaFreeAsync, PI_GPU_ALLOC_POOL, (void *p, cudaStream_t s),
          (p, s), p, s, PI_CUDA_ASYNC)
FREE_HOOK(cudaFreeAsync_ptsz, PI_CUDA_API_cudaFreeAsync, PI_GPU_ALLOC_POOL,
          (void *p, cudaStream_t s), (p, s), p, s, PI_CUDA_ASYNC)

/* From a given pool (cudaMemPoolCreate, or one the caller set up). */
static cudaError_t alloc_from_pool(cudaError_t (*real)(void **, size_t, cudaMemPool_t, cudaStream_t),
                                   void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
    if (!pi_cuda_memory_hook_active())
        return real(ptr, size, pool, stream);
    uint64_t start = pi_clock_ticks();
    ENTER();
    cudaError_t r = real(ptr, size, pool, stream);
    LEAVE();
    pi_cuda_emit_alloc(PI_CUDA_API_cudaMallocFromPoolAsync, PI_GPU_ALLOC_POOL, PI_CUDA_ASYNC,
                       r == cudaSuccess ? (uint64_t)(uintptr_t)*ptr : 0, size, stream, start,
                       r != cudaSuccess);
    pi_pool_used(pool);
    return r;
}

#define FROM_POOL_HOOK(name)                                                                      \
    PI_EXPORT cudaError_t name(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)  \
    {                                                                                             \
        typedef cudaError_t (*fn)(void **, size_t, cudaMemPool_t, cudaStream_t);                  \
        RUNTIME_REAL(fn, name);                                                                   \
        return alloc_from_pool(name##_real, ptr, size, pool, stream);                             \
    }

FROM_POOL_HOOK(cudaMallocFromPoolAsync)
FROM_POOL_HOOK(cudaMallocFromPoolAsync_ptsz)

PI_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    typedef cudaError_t (*fn)(void *, size_t, unsigned);
    RUNTIME_REAL(fn, cudaHostRegister);
    if (!pi_cuda_memory_hook_active())
        return cudaHostRegister_real(ptr, size, flags);
    uint64_t start = pi_clock_ticks();
    ENTER();
    cudaError_t r = cudaHostRegister_real(ptr, size, flags);
    LEAVE();
    if (r == cudaSuccess)
        pi_cuda_pinned_add(ptr, size);
    pi_cuda_emit_alloc(PI_CUDA_API_cudaHostRegister, PI_GPU_ALLOC_REGISTERED, 0,
                       (uint64_t)(uintptr_t)ptr, size, NULL, start, r != cudaSuccess);
    return r;
}

/* ---- launches ---- */

/* The launch record: the kernel named by its host stub, else by the
 * driver launch inside it. */
static void emit_runtime_launch(unsigned api, unsigned kind, const void *stub, uint64_t corr,
                                const void *stream, uint64_t start, uint64_t end, int failed)
{
    uint32_t name = pi_cuda_host_stub_name(stub);
    if (!name && pi_cuda_last_function)
        name = pi_cuda_handle_name(pi_cuda_last_function);
    pi_cuda_emit_launch(api, kind, 0, corr, name, stream, start, end, failed);
}

/* Time and record one launch; @call is the real launch. */
#define TIMED_LAUNCH(api, kind, stub, stream, per_thread, call)                                   \
    TIMED_CALL(stream, per_thread, pi_cuda_last_function = NULL, call,                            \
               emit_runtime_launch(api, kind, stub, corr, stream, start, end, r != cudaSuccess))

#define LAUNCH_HOOK(name, per_thread)                                                             \
    PI_EXPORT cudaError_t name(const void *func, dim3 grid, dim3 block, void **args,              \
                               size_t shared, cudaStream_t stream)                                \
    {                                                                                             \
        typedef cudaError_t (*fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);       \
        RUNTIME_REAL(fn, name);                                                                   \
        TIMED_LAUNCH(PI_CUDA_API_cudaLaunchKernel, PI_GPU_KERNEL, func, stream, per_thread,       \
                     name##_real(func, grid, block, args, shared, stream));                       \
    }

LAUNCH_HOOK(cudaLaunchKernel, 0)
LAUNCH_HOOK(cudaLaunchKernel_ptsz, 1)
/* blocks that may synchronise with each other: a launch like the others,
 * under cudaLaunchKernel's id (docs/cuda-entry-points.md) */
LAUNCH_HOOK(cudaLaunchCooperativeKernel, 0)
LAUNCH_HOOK(cudaLaunchCooperativeKernel_ptsz, 1)

/* nvcc 13's <<<>>>: the host stub fetches its kernel's handle once with
 * __cudaGetKernel, then launches with __cudaLaunchKernel (or _ptsz) and the
 * handle (crt/host_runtime.h, crt/device_functions.h); libtorch_cuda calls
 * them the same way. The handle is named from the stub when it is fetched,
 * else from the driver at its first launch (kernel_names.h). */
#define GET_KERNEL_HOOK(name)                                                                     \
    PI_EXPORT cudaError_t name(cudaKernel_t *kernel, const void *stub)                           \
    {                                                                                             \
        typedef cudaError_t (*fn)(cudaKernel_t *, const void *);                                  \
        RUNTIME_REAL(fn, name);                                                                   \
        cudaError_t r = name##_real(kernel, stub);                                                \
        if (r == cudaSuccess && kernel && pi_cuda_memory_hook_active())                           \
            pi_cuda_name_kernel_from_stub(*kernel, stub);                                         \
        return r;                                                                                 \
    }

GET_KERNEL_HOOK(__cudaGetKernel)
GET_KERNEL_HOOK(cudaGetKernel)

#define HANDLE_LAUNCH_HOOK(name, per_thread)                                                      \
    PI_EXPORT cudaError_t name(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,           \
                               size_t shared, cudaStream_t stream)                                \
    {                                                                                             \
        typedef cudaError_t (*fn)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);       \
        RUNTIME_REAL(fn, name);                                                                   \
        TIMED_CALL(stream, per_thread, (void)0,                                                   \
                   name##_real(kernel, grid, block, args, shared, stream),                        \
                   pi_cuda_emit_launch(PI_CUDA_API___cudaLaunchKernel, PI_GPU_KERNEL, 0, corr,    \
                                       pi_cuda_handle_name(kernel), stream, start, end,           \
                                       r != cudaSuccess));                                        \
    }

HANDLE_LAUNCH_HOOK(__cudaLaunchKernel, 0)
HANDLE_LAUNCH_HOOK(__cudaLaunchKernel_ptsz, 1)

#define LAUNCH_EX_HOOK(name, per_thread)                                                          \
    PI_EXPORT cudaError_t name(const cudaLaunchConfig_t *config, const void *func, void **args)   \
    {                                                                                             \
        typedef cudaError_t (*fn)(const cudaLaunchConfig_t *, const void *, void **);             \
        RUNTIME_REAL(fn, name);                                                                   \
        TIMED_LAUNCH(PI_CUDA_API_cudaLaunchKernelExC, PI_GPU_KERNEL_EX, func,                     \
                     config ? config->stream : NULL, per_thread, name##_real(config, func, args)); \
    }

LAUNCH_EX_HOOK(cudaLaunchKernelExC, 0)
LAUNCH_EX_HOOK(cudaLaunchKernelExC_ptsz, 1)

#define GRAPH_HOOK(name, per_thread)                                                              \
    PI_EXPORT cudaError_t name(cudaGraphExec_t graph, cudaStream_t stream)                        \
    {                                                                                             \
        typedef cudaError_t (*fn)(cudaGraphExec_t, cudaStream_t);                                 \
        RUNTIME_REAL(fn, name);                                                                   \
        TIMED_LAUNCH(PI_CUDA_API_cudaGraphLaunch, PI_GPU_GRAPH, NULL, stream, per_thread,         \
                     name##_real(graph, stream));                                                 \
    }

GRAPH_HOOK(cudaGraphLaunch, 0)
GRAPH_HOOK(cudaGraphLaunch_ptsz, 1)

/* ---- synchronisation ---- */

#define SYNC_HOOK(name, api, kind, params, args, handle)                                          \
    PI_EXPORT cudaError_t name params                                                             \
    {                                                                                             \
        typedef cudaError_t(*fn) params;                                                          \
        RUNTIME_REAL(fn, name);                                                                   \
        if (!pi_hook_active())                                                                    \
            return name##_real args;                                                              \
        uint64_t start = pi_clock_ticks();                                                        \
        pi_cuda_block_begin(api, kind, handle, start);                                            \
        ENTER();                                                                                  \
        cudaError_t r = name##_real args;                                                         \
        LEAVE();                                                                                  \
        pi_wait_end();                                                                            \
        pi_cuda_emit_sync(api, kind, 0, handle, start, r != cudaSuccess);                         \
        return r;                                                                                 \
    }

SYNC_HOOK(cudaDeviceSynchronize, PI_CUDA_API_cudaDeviceSynchronize, PI_GPU_SYNC_DEVICE, (void), (),
          NULL)
SYNC_HOOK(cudaStreamSynchronize, PI_CUDA_API_cudaStreamSynchronize, PI_GPU_SYNC_STREAM,
          (cudaStream_t s), (s), s)
SYNC_HOOK(cudaStreamSynchronize_ptsz, PI_CUDA_API_cudaStreamSynchronize, PI_GPU_SYNC_STREAM,
          (cudaStream_t s), (s), s)
SYNC_HOOK(cudaEventSynchronize, PI_CUDA_API_cudaEventSynchronize, PI_GPU_SYNC_EVENT,
          (cudaEvent_t e), (e), e)
SYNC_HOOK(cudaStreamWaitEvent, PI_CUDA_API_cudaStreamWaitEvent, PI_GPU_SYNC_STREAM_WAIT,
          (cudaStream_t s, cudaEvent_t e, unsigned f), (s, e, f), e)
SYNC_HOOK(cudaStreamWaitEvent_ptsz, PI_CUDA_API_cudaStreamWaitEvent, PI_GPU_SYNC_STREAM_WAIT,
          (cudaStream_t s, cudaEvent_t e, unsigned f), (s, e, f), e)

/* ---- the device count ---- */

/* PyTorch's torch.cuda.is_available() and device_count() ask this first.
 * When it fails (no driver, no device), nothing will ever run on a GPU:
 * the trace says so, once, with the runtime and CUPTI it found. */
PI_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    typedef cudaError_t (*fn)(int *);
    RUNTIME_REAL(fn, cudaGetDeviceCount);
    cudaError_t r = cudaGetDeviceCount_real(count);
    if (__builtin_expect(r != cudaSuccess, 0) && pi_hook_active()) {
        int saved = errno;
        pi_gpu_timing_no_device((int)r, (const void *)cudaGetDeviceCount_real);
        errno = saved;
    }
    return r;
}

/* ---- driver entry points handed to the application: wrap what they return ---- */

#define ENTRY_POINT_HOOK(name)                                                                    \
    PI_EXPORT cudaError_t name(const char *symbol, void **pfn, unsigned int version,              \
                               unsigned long long flags,                                          \
                               enum cudaDriverEntryPointQueryResult *status)                      \
    {                                                                                             \
        typedef cudaError_t (*fn)(const char *, void **, unsigned, unsigned long long,            \
                                  enum cudaDriverEntryPointQueryResult *);                        \
        RUNTIME_REAL(fn, name);                                                                   \
        pi_ensure_init();                                                                         \
        cudaError_t r = name##_real(symbol, pfn, version, flags, status);                         \
        if (r == cudaSuccess && pfn && *pfn)                                                      \
            *pfn = pi_cuda_wrap_driver(symbol, (int)version, flags, *pfn);                        \
        return r;                                                                                 \
    }

ENTRY_POINT_HOOK(cudaGetDriverEntryPointByVersion)
ENTRY_POINT_HOOK(cudaGetDriverEntryPointByVersion_ptsz)

#define OLD_ENTRY_POINT_HOOK(name)                                                                \
    PI_EXPORT cudaError_t name(const char *symbol, void **pfn, unsigned long long flags,          \
                               enum cudaDriverEntryPointQueryResult *status)                      \
    {                                                                                             \
        typedef cudaError_t (*fn)(const char *, void **, unsigned long long,                      \
                                  enum cudaDriverEntryPointQueryResult *);                        \
        RUNTIME_REAL(fn, name);                                                                   \
        pi_ensure_init();                                                                         \
        cudaError_t r = name##_real(symbol, pfn, flags, status);                                  \
        if (r == cudaSuccess && pfn && *pfn)                                                      \
            *pfn = pi_cuda_wrap_driver(symbol, CUDA_VERSION, flags, *pfn);                        \
        return r;                                                                                 \
    }

OLD_ENTRY_POINT_HOOK(cudaGetDriverEntryPoint)
OLD_ENTRY_POINT_HOOK(cudaGetDriverEntryPoint_ptsz)
