/*
 * driver_launch_hooks.c - driver wrappers for the work put on streams:
 * copies, kernel launches and graph launches, synchronisation, and the
 * module and kernel lookups that give launches their names.
 */
#include <errno.h>
#include <string.h>

#include "driver_hook.h"
#include "gpu_timing/gpu_timing.h"
#include "kernel_names.h"

/* ---- copies ---- */

static CUresult copy(int id, unsigned api, unsigned kind, int flavour, uint64_t dst, uint64_t src,
                     size_t bytes, CUstream stream, int async)
{
    void *fn = pi_driver_real(id, flavour);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!pi_hook_active())
        return async ? ((CUresult(*)(uint64_t, uint64_t, size_t, CUstream))fn)(dst, src, bytes, stream)
                     : ((CUresult(*)(uint64_t, uint64_t, size_t))fn)(dst, src, bytes);
    uint64_t start = pi_clock_ticks();
    unsigned nested = pi_cuda_nesting_bits();
    struct pi_gpu_pair pair = {0};
    uint64_t corr = CORRELATION();
    if (!nested)
        pi_gpu_timing_start(&pair, stream, flavour, start);
    if (!async)
        pi_cuda_block_begin(api, kind, NULL, start);
    /* the ABI passes pointers and device addresses alike in integer registers */
    CUresult r = async ? ((CUresult(*)(uint64_t, uint64_t, size_t, CUstream))fn)(dst, src, bytes, stream)
                       : ((CUresult(*)(uint64_t, uint64_t, size_t))fn)(dst, src, bytes);
    if (!async)
        pi_wait_end();
    uint64_t end = pi_clock_ticks();
    if (!nested)
        pi_gpu_timing_finish(&pair, corr, r != CUDA_SUCCESS, end);
    const void *host = kind == PI_GPU_COPY_HTOD   ? (const void *)(uintptr_t)src
                       : kind == PI_GPU_COPY_DTOH ? (const void *)(uintptr_t)dst
                                                  : NULL;
    unsigned bits = BITS() | (async ? PI_CUDA_ASYNC : 0) |
                    (host && pi_cuda_is_pinned(host) ? PI_CUDA_PINNED : 0);
    pi_cuda_emit_copy(api, kind, bits, bytes, corr, stream, start, end, r != CUDA_SUCCESS);
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

PI_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module,
                                               const char *name)
{
    void *fn = pi_driver_real(DRV_cuModuleGetFunction, 0);
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
    void *fn = pi_driver_real(DRV_cuLibraryGetKernel, 0);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = ((CUresult(*)(CUkernel *, CUlibrary, const char *))fn)(kernel, library, name);
    if (r == CUDA_SUCCESS && pi_hook_active())
        pi_cuda_remember_function(*kernel, name);
    return r;
}

/* ---- launches ---- */

/* A launch inside a runtime launch is that launch: it only lends its
 * kernel handle, named by the runtime hook if its stub has no name
 * (launches are the hot path; no second record and no lookup here). */
#define DRIVER_LAUNCH(id, api, kind, function, stream, call)                                      \
    do {                                                                                          \
        if (!pi_hook_active())                                                                    \
            return call;                                                                          \
        if (pi_cuda_runtime_depth > 0) {                                                          \
            pi_cuda_last_function = (const void *)(function);                                     \
            return call;                                                                          \
        }                                                                                         \
        uint64_t start = pi_clock_ticks();                                                        \
        struct pi_gpu_pair pair;                                                                  \
        uint64_t corr = pi_cuda_next_correlation();                                               \
        pi_gpu_timing_start(&pair, stream, flavour, start);                                       \
        CUresult r = call;                                                                        \
        uint64_t end = pi_clock_ticks();                                                          \
        pi_gpu_timing_finish(&pair, corr, r != CUDA_SUCCESS, end);                                \
        pi_cuda_emit_launch(api, kind, PI_CUDA_DRIVER, corr, pi_cuda_handle_name(function),       \
                            stream, start, end, r != CUDA_SUCCESS);                               \
        return r;                                                                                 \
    } while (0)

#define PI_LAUNCH_BODY static inline __attribute__((always_inline))

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

/* inlined into both flavours: a launch is not worth a second call */
PI_LAUNCH_BODY CUresult launch_body(int flavour, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
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

/* A kernel whose blocks may synchronise with each other (grid sync): a
 * launch of the cuLaunchKernel kind, recorded under that id (the format
 * has none of its own; docs/cuda-entry-points.md). */
typedef CUresult (*cooperative_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void **);

/* inlined into both flavours: a launch is not worth a second call */
PI_LAUNCH_BODY CUresult cooperative_body(int flavour, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                 CUstream stream, void **params)
{
    cooperative_fn real = REAL(DRV_cuLaunchCooperativeKernel, flavour, cooperative_fn);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    DRIVER_LAUNCH(DRV_cuLaunchCooperativeKernel, PI_CUDA_API_cuLaunchKernel, PI_GPU_KERNEL, f,
                  stream, real(f, gx, gy, gz, bx, by, bz, shared, stream, params));
}
FLAVOURS(cooperative_body, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz,
         (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
          unsigned bz, unsigned shared, CUstream stream, void **params),
         (f, gx, gy, gz, bx, by, bz, shared, stream, params))

typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

/* inlined into both flavours: a launch is not worth a second call */
PI_LAUNCH_BODY CUresult launch_ex_body(int flavour, const CUlaunchConfig *config, CUfunction f,
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

/* inlined into both flavours: a launch is not worth a second call */
PI_LAUNCH_BODY CUresult graph_body(int flavour, CUgraphExec graph, CUstream stream)
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
    void *fn = pi_driver_real(id, flavour);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    int active = pi_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    if (active)
        pi_cuda_block_begin(api, kind, handle, start);
    CUresult r = arity == 0 ? ((CUresult(*)(void))fn)() : ((CUresult(*)(const void *))fn)(handle);
    if (active) {
        pi_wait_end();
        pi_cuda_emit_sync(api, kind, BITS(), handle, start, r != CUDA_SUCCESS);
    }
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

void pi_driver_launch_wrappers(struct pi_driver_entry *entries)
{
    entries[DRV_cuMemcpy].wrapper[0] = (void *)cuMemcpy;
    entries[DRV_cuMemcpy].wrapper[1] = (void *)cuMemcpy_ptds;
    entries[DRV_cuMemcpyAsync].wrapper[0] = (void *)cuMemcpyAsync;
    entries[DRV_cuMemcpyAsync].wrapper[1] = (void *)cuMemcpyAsync_ptsz;
    entries[DRV_cuMemcpyHtoD].wrapper[0] = (void *)cuMemcpyHtoD_v2;
    entries[DRV_cuMemcpyHtoD].wrapper[1] = (void *)cuMemcpyHtoD_v2_ptds;
    entries[DRV_cuMemcpyDtoH].wrapper[0] = (void *)cuMemcpyDtoH_v2;
    entries[DRV_cuMemcpyDtoH].wrapper[1] = (void *)cuMemcpyDtoH_v2_ptds;
    entries[DRV_cuMemcpyDtoD].wrapper[0] = (void *)cuMemcpyDtoD_v2;
    entries[DRV_cuMemcpyDtoD].wrapper[1] = (void *)cuMemcpyDtoD_v2_ptds;
    entries[DRV_cuMemcpyHtoDAsync].wrapper[0] = (void *)cuMemcpyHtoDAsync_v2;
    entries[DRV_cuMemcpyHtoDAsync].wrapper[1] = (void *)cuMemcpyHtoDAsync_v2_ptsz;
    entries[DRV_cuMemcpyDtoHAsync].wrapper[0] = (void *)cuMemcpyDtoHAsync_v2;
    entries[DRV_cuMemcpyDtoHAsync].wrapper[1] = (void *)cuMemcpyDtoHAsync_v2_ptsz;
    entries[DRV_cuMemcpyDtoDAsync].wrapper[0] = (void *)cuMemcpyDtoDAsync_v2;
    entries[DRV_cuMemcpyDtoDAsync].wrapper[1] = (void *)cuMemcpyDtoDAsync_v2_ptsz;
    entries[DRV_cuLaunchKernel].wrapper[0] = (void *)cuLaunchKernel;
    entries[DRV_cuLaunchKernel].wrapper[1] = (void *)cuLaunchKernel_ptsz;
    entries[DRV_cuLaunchKernelEx].wrapper[0] = (void *)cuLaunchKernelEx;
    entries[DRV_cuLaunchKernelEx].wrapper[1] = (void *)cuLaunchKernelEx_ptsz;
    entries[DRV_cuLaunchCooperativeKernel].wrapper[0] = (void *)cuLaunchCooperativeKernel;
    entries[DRV_cuLaunchCooperativeKernel].wrapper[1] = (void *)cuLaunchCooperativeKernel_ptsz;
    entries[DRV_cuGraphLaunch].wrapper[0] = (void *)cuGraphLaunch;
    entries[DRV_cuGraphLaunch].wrapper[1] = (void *)cuGraphLaunch_ptsz;
    entries[DRV_cuStreamSynchronize].wrapper[0] = (void *)cuStreamSynchronize;
    entries[DRV_cuStreamSynchronize].wrapper[1] = (void *)cuStreamSynchronize_ptsz;
    entries[DRV_cuCtxSynchronize].wrapper[0] = (void *)cuCtxSynchronize;
    entries[DRV_cuEventSynchronize].wrapper[0] = (void *)cuEventSynchronize;
    entries[DRV_cuModuleGetFunction].wrapper[0] = (void *)cuModuleGetFunction;
    entries[DRV_cuLibraryGetKernel].wrapper[0] = (void *)cuLibraryGetKernel;
}
