/*
 * cuda_runtime_copy_hooks.c - the CUDA runtime's copies and sets,
 * interposed by symbol, with their per-thread-default-stream flavours
 * (_ptds, _ptsz). Copies between devices without peer access
 * (cudaMemcpyPeerAsync) and into __constant__/__device__ symbols
 * (cudaMemcpyToSymbol) are copies like the others: the trace format has no
 * id of their own for them, so they are recorded under cudaMemcpyAsync
 * (device to device) and cudaMemcpy (docs/cuda-entry-points.md).
 */
#include <cuda_runtime_api.h>

#include "runtime_hook.h"

static unsigned copy_kind(enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return PI_GPU_COPY_HTOD;
    case cudaMemcpyDeviceToHost:
        return PI_GPU_COPY_DTOH;
    case cudaMemcpyDeviceToDevice:
        return PI_GPU_COPY_DTOD;
    case cudaMemcpyHostToHost:
        return PI_GPU_COPY_HTOH;
    default:
        return PI_GPU_COPY_DEFAULT;
    }
}

/* The host side of a copy, for the pinned/pageable question. */
static unsigned pinned_bits(unsigned kind, const void *dst, const void *src)
{
    const void *host = kind == PI_GPU_COPY_HTOD ? src : kind == PI_GPU_COPY_DTOH ? dst : NULL;
    return host && pi_cuda_is_pinned(host) ? PI_CUDA_PINNED : 0;
}

/* One timed copy: the real call is made by @call with the pair running. */
#define TIMED_COPY(api, kind_value, bits_value, bytes, stream, per_thread, call)                  \
    TIMED_CALL(stream, per_thread, (void)0, call,                                                 \
               pi_cuda_emit_copy(api, kind_value, bits_value, bytes, corr, stream, start, end,    \
                                 r != cudaSuccess))

/* a copy that waits for the device: kept as the thread's wait while it blocks */
#define MEMCPY_HOOK(name, api, per_thread)                                                        \
    PI_EXPORT cudaError_t name(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind) \
    {                                                                                             \
        typedef cudaError_t (*fn)(void *, const void *, size_t, enum cudaMemcpyKind);             \
        RUNTIME_REAL(fn, name);                                                                   \
        unsigned k = copy_kind(kind);                                                             \
        TIMED_CALL(NULL, per_thread, pi_cuda_block_begin(api, k, NULL, start),                    \
                   name##_real(dst, src, count, kind),                                            \
                   (pi_wait_end(), pi_cuda_emit_copy(api, k, pinned_bits(k, dst, src), count,     \
                                                     corr, NULL, start, end, r != cudaSuccess))); \
    }

#define MEMCPY_ASYNC_HOOK(name, api, per_thread)                                                  \
    PI_EXPORT cudaError_t name(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, \
                               cudaStream_t stream)                                               \
    {                                                                                             \
        typedef cudaError_t (*fn)(void *, const void *, size_t, enum cudaMemcpyKind,              \
                                  cudaStream_t);                                                  \
        RUNTIME_REAL(fn, name);                                                                   \
        unsigned k = copy_kind(kind);                                                             \
        TIMED_COPY(api, k, pinned_bits(k, dst, src) | PI_CUDA_ASYNC, count, stream, per_thread,   \
                   name##_real(dst, src, count, kind, stream));                                   \
    }

MEMCPY_HOOK(cudaMemcpy, PI_CUDA_API_cudaMemcpy, 0)
MEMCPY_HOOK(cudaMemcpy_ptds, PI_CUDA_API_cudaMemcpy, 1)
MEMCPY_ASYNC_HOOK(cudaMemcpyAsync, PI_CUDA_API_cudaMemcpyAsync, 0)
MEMCPY_ASYNC_HOOK(cudaMemcpyAsync_ptsz, PI_CUDA_API_cudaMemcpyAsync, 1)

#define MEMCPY2D_HOOK(name, api, per_thread, async_params, async_args, stream, bits)              \
    PI_EXPORT cudaError_t name(void *dst, size_t dpitch, const void *src, size_t spitch,          \
                               size_t width, size_t height,                                       \
                               enum cudaMemcpyKind kind async_params)                             \
    {                                                                                             \
        typedef cudaError_t (*fn)(void *, size_t, const void *, size_t, size_t, size_t,           \
                                  enum cudaMemcpyKind async_params);                              \
        RUNTIME_REAL(fn, name);                                                                   \
        unsigned k = copy_kind(kind);                                                             \
        TIMED_COPY(api, k, pinned_bits(k, dst, src) | (bits), (uint64_t)width * height, stream,   \
                   per_thread,                                                                    \
                   name##_real(dst, dpitch, src, spitch, width, height, kind async_args));        \
    }

#define NO_PARAMS
#define PI_STREAM_PARAM , cudaStream_t stream
#define PI_STREAM_ARG , stream
MEMCPY2D_HOOK(cudaMemcpy2D, PI_CUDA_API_cudaMemcpy2D, 0, NO_PARAMS, NO_PARAMS, NULL, 0)
MEMCPY2D_HOOK(cudaMemcpy2D_ptds, PI_CUDA_API_cudaMemcpy2D, 1, NO_PARAMS, NO_PARAMS, NULL, 0)
MEMCPY2D_HOOK(cudaMemcpy2DAsync, PI_CUDA_API_cudaMemcpy2DAsync, 0, PI_STREAM_PARAM,
              PI_STREAM_ARG, stream, PI_CUDA_ASYNC)
MEMCPY2D_HOOK(cudaMemcpy2DAsync_ptsz, PI_CUDA_API_cudaMemcpy2DAsync, 1, PI_STREAM_PARAM,
              PI_STREAM_ARG, stream, PI_CUDA_ASYNC)

/* Between two devices without peer access: a device-to-device copy on @stream. */
PI_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src,
                                          int src_device, size_t count, cudaStream_t stream)
{
    typedef cudaError_t (*fn)(void *, int, const void *, int, size_t, cudaStream_t);
    RUNTIME_REAL(fn, cudaMemcpyPeerAsync);
    TIMED_COPY(PI_CUDA_API_cudaMemcpyAsync, PI_GPU_COPY_DTOD, PI_CUDA_ASYNC, count, stream, 0,
               cudaMemcpyPeerAsync_real(dst, dst_device, src, src_device, count, stream));
}

/* Into a __constant__ or __device__ variable: a synchronous copy of @kind. */
#define TO_SYMBOL_HOOK(name, per_thread)                                                          \
    PI_EXPORT cudaError_t name(const void *symbol, const void *src, size_t count, size_t offset,  \
                               enum cudaMemcpyKind kind)                                          \
    {                                                                                             \
        typedef cudaError_t (*fn)(const void *, const void *, size_t, size_t,                     \
                                  enum cudaMemcpyKind);                                           \
        RUNTIME_REAL(fn, name);                                                                   \
        unsigned k = copy_kind(kind);                                                             \
        TIMED_COPY(PI_CUDA_API_cudaMemcpy, k, pinned_bits(k, NULL, src), count, NULL, per_thread, \
                   name##_real(symbol, src, count, offset, kind));                                \
    }

TO_SYMBOL_HOOK(cudaMemcpyToSymbol, 0)
TO_SYMBOL_HOOK(cudaMemcpyToSymbol_ptds, 1)

#define MEMSET_HOOK(name, api, per_thread, async_params, async_args, stream, bits)                \
    PI_EXPORT cudaError_t name(void *ptr, int value, size_t count async_params)                   \
    {                                                                                             \
        typedef cudaError_t (*fn)(void *, int, size_t async_params);                              \
        RUNTIME_REAL(fn, name);                                                                   \
        TIMED_COPY(api, PI_GPU_MEMSET, bits, count, stream, per_thread,                           \
                   name##_real(ptr, value, count async_args));                                    \
    }

MEMSET_HOOK(cudaMemset, PI_CUDA_API_cudaMemset, 0, NO_PARAMS, NO_PARAMS, NULL, 0)
MEMSET_HOOK(cudaMemset_ptds, PI_CUDA_API_cudaMemset, 1, NO_PARAMS, NO_PARAMS, NULL, 0)
MEMSET_HOOK(cudaMemsetAsync, PI_CUDA_API_cudaMemsetAsync, 0, PI_STREAM_PARAM, PI_STREAM_ARG,
            stream, PI_CUDA_ASYNC)
MEMSET_HOOK(cudaMemsetAsync_ptsz, PI_CUDA_API_cudaMemsetAsync, 1, PI_STREAM_PARAM, PI_STREAM_ARG,
            stream, PI_CUDA_ASYNC)
