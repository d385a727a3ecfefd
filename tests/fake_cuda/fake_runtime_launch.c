/*
 * fake_runtime_launch.c - kernels, launches, copies and sets of the fake
 * libcudart.so.13 (see fake_runtime.c).
 *
 * nvcc's registration code calls __cudaRegisterFunction (host stub ->
 * device name). CUDA 13's <<<>>> pushes the launch configuration, enters
 * the host stub, which fetches the kernel handle once with __cudaGetKernel,
 * pops the configuration and calls __cudaLaunchKernel (or _ptsz) with the
 * handle (crt/host_runtime.h, crt/device_functions.h). The handle is the
 * library kernel: cudaKernel_t is CUkernel (driver_types.h). cudaLaunchKernel
 * takes the host stub and launches the module's function.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_runtime.h"

struct kernel {
    const void *stub;
    char name[256];
    CUfunction function; /* from the module, for cudaLaunchKernel */
    CUkernel handle;     /* from the library, for __cudaLaunchKernel */
    struct kernel *next;
};
static struct kernel *kernels;
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static CUmodule module;
static CUlibrary library;

EXPORT void **__cudaRegisterFatBinary(void *fat_cubin)
{
    static void *handle;
    (void)fat_cubin;
    return &handle;
}

EXPORT void __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle;
}

EXPORT void __cudaRegisterFunction(void **handle, const char *host_function, char *device_function,
                                   const char *device_name, int thread_limit, uint3 *tid,
                                   uint3 *bid, dim3 *block, dim3 *grid, int *warp_size)
{
    (void)handle, (void)device_function, (void)thread_limit, (void)tid, (void)bid, (void)block;
    (void)grid, (void)warp_size;
    struct kernel *k = calloc(1, sizeof(*k));
    if (!k)
        return;
    k->stub = host_function;
    snprintf(k->name, sizeof(k->name), "%s", device_name);
    pthread_mutex_lock(&kernels_lock);
    k->next = kernels;
    kernels = k;
    pthread_mutex_unlock(&kernels_lock);
}

/* The kernel registered for @stub, its module function or library handle loaded. */
static struct kernel *kernel_of(const void *stub, int want_handle)
{
    struct kernel *found = NULL;
    pthread_mutex_lock(&kernels_lock);
    for (struct kernel *k = kernels; k; k = k->next)
        if (k->stub == stub) {
            if (want_handle && !k->handle) {
                if (!library)
                    drv.cuLibraryLoadData[0](&library, "fake image", NULL, NULL, 0, NULL, NULL, 0);
                drv.cuLibraryGetKernel[0](&k->handle, library, k->name);
            } else if (!want_handle && !k->function) {
                if (!module)
                    drv.cuModuleLoadData[0](&module, "fake image");
                drv.cuModuleGetFunction[0](&k->function, module, k->name);
            }
            found = k;
            break;
        }
    pthread_mutex_unlock(&kernels_lock);
    return found;
}

static cudaError_t get_kernel(cudaKernel_t *handle, const void *stub)
{
    cudaError_t e = fake_ready();
    if (e != cudaSuccess)
        return e;
    struct kernel *k = kernel_of(stub, 1);
    if (!k || !k->handle)
        return cudaErrorInvalidDeviceFunction;
    *handle = (cudaKernel_t)k->handle;
    return cudaSuccess;
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *handle, const void *stub)
{
    return get_kernel(handle, stub);
}

EXPORT cudaError_t cudaGetKernel(cudaKernel_t *handle, const void *stub)
{
    return get_kernel(handle, stub);
}

static cudaError_t func_get_name(const char **name, const void *stub)
{
    struct kernel *k = fake_ready() == cudaSuccess ? kernel_of(stub, 0) : NULL;
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    *name = k->name;
    return cudaSuccess;
}

EXPORT cudaError_t cudaFuncGetName(const char **name, const void *stub)
{
    return func_get_name(name, stub);
}

/* ---- the launch configuration of <<<>>>, one stack per thread ---- */

#define CONFIG_DEPTH 16
static __thread struct call_configuration {
    dim3 grid, block;
    size_t shared;
    void *stream;
} configurations[CONFIG_DEPTH];
static __thread int configured;

EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream)
{
    if (configured >= CONFIG_DEPTH)
        return 1;
    configurations[configured++] = (struct call_configuration){grid, block, shared, stream};
    return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    if (configured <= 0)
        return cudaErrorMissingConfiguration;
    struct call_configuration *c = &configurations[--configured];
    *grid = c->grid;
    *block = c->block;
    *shared = c->shared;
    *(void **)stream = c->stream;
    return cudaSuccess;
}

/* ---- launches ---- */

static cudaError_t launch_function(int flavour, CUfunction f, dim3 grid, dim3 block, void **args,
                                   size_t shared, cudaStream_t stream)
{
    if (!f)
        return cudaErrorInvalidDeviceFunction;
    return fake_result(drv.cuLaunchKernel[flavour](f, grid.x, grid.y, grid.z, block.x, block.y,
                                                   block.z, (unsigned)shared, (CUstream)stream,
                                                   args, NULL));
}

static cudaError_t launch_stub(int flavour, const void *stub, dim3 grid, dim3 block, void **args,
                               size_t shared, cudaStream_t stream)
{
    cudaError_t e = fake_ready();
    if (e != cudaSuccess)
        return e;
    struct kernel *k = kernel_of(stub, 0);
    return launch_function(flavour, k ? k->function : NULL, grid, block, args, shared, stream);
}

/* A CUkernel is launched by the driver where a CUfunction is (cuda.h, cuLaunchKernel). */
static cudaError_t launch_handle(int flavour, cudaKernel_t kernel, dim3 grid, dim3 block,
                                 void **args, size_t shared, cudaStream_t stream)
{
    cudaError_t e = fake_ready();
    if (e != cudaSuccess)
        return e;
    return launch_function(flavour, (CUfunction)kernel, grid, block, args, shared, stream);
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                    size_t shared, cudaStream_t stream)
{
    RUNTIME_CALL(cudaLaunchKernel_v7000, launch_stub(0, func, grid, block, args, shared, stream));
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
                                         size_t shared, cudaStream_t stream)
{
    RUNTIME_CALL(cudaLaunchKernel_ptsz_v7000,
                 launch_stub(1, func, grid, block, args, shared, stream));
}

EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                      size_t shared, cudaStream_t stream)
{
    RUNTIME_CALL(__cudaLaunchKernel_v13000,
                 launch_handle(0, kernel, grid, block, args, shared, stream));
}

EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                           size_t shared, cudaStream_t stream)
{
    RUNTIME_CALL(__cudaLaunchKernel_ptsz_v13000,
                 launch_handle(1, kernel, grid, block, args, shared, stream));
}

/* Cooperative: the driver's own entry, as the real runtime calls it. */
static cudaError_t launch_cooperative(int flavour, const void *stub, dim3 grid, dim3 block,
                                      void **args, size_t shared, cudaStream_t stream)
{
    cudaError_t e = fake_ready();
    if (e != cudaSuccess)
        return e;
    struct kernel *k = kernel_of(stub, 0);
    if (!k || !k->function)
        return cudaErrorInvalidDeviceFunction;
    return fake_result(drv.cuLaunchCooperativeKernel[flavour](
        k->function, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shared,
        (CUstream)stream, args));
}

EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block,
                                               void **args, size_t shared, cudaStream_t stream)
{
    RUNTIME_CALL(cudaLaunchCooperativeKernel_v9000,
                 launch_cooperative(0, func, grid, block, args, shared, stream));
}

EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 grid, dim3 block,
                                                    void **args, size_t shared,
                                                    cudaStream_t stream)
{
    RUNTIME_CALL(cudaLaunchCooperativeKernel_ptsz_v9000,
                 launch_cooperative(1, func, grid, block, args, shared, stream));
}

static cudaError_t launch_ex(int flavour, const cudaLaunchConfig_t *config, const void *func,
                             void **args)
{
    cudaError_t e = fake_ready();
    if (e != cudaSuccess)
        return e;
    struct kernel *k = kernel_of(func, 0);
    if (!k || !k->function)
        return cudaErrorInvalidDeviceFunction;
    CUlaunchConfig c;
    memset(&c, 0, sizeof(c));
    c.gridDimX = config->gridDim.x;
    c.blockDimX = config->blockDim.x;
    c.hStream = (CUstream)config->stream;
    return fake_result(drv.cuLaunchKernelEx[flavour](&c, k->function, args, NULL));
}

EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                       void **args)
{
    RUNTIME_CALL(cudaLaunchKernelExC_v11060, launch_ex(0, config, func, args));
}

EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                            void **args)
{
    RUNTIME_CALL(cudaLaunchKernelExC_ptsz_v11060, launch_ex(1, config, func, args));
}

static cudaError_t graph_launch(int flavour, cudaGraphExec_t graph, cudaStream_t stream)
{
    CALL(flavour, cuGraphLaunch, (CUgraphExec)graph, (CUstream)stream);
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graph, cudaStream_t stream)
{
    RUNTIME_CALL(cudaGraphLaunch_v10000, graph_launch(0, graph, stream));
}

EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graph, cudaStream_t stream)
{
    RUNTIME_CALL(cudaGraphLaunch_ptsz_v10000, graph_launch(1, graph, stream));
}

/* ---- copies and sets ---- */

static cudaError_t memcpy_kind(int flavour, void *dst, const void *src, size_t count,
                               enum cudaMemcpyKind kind, cudaStream_t stream, int async)
{
    cudaError_t e = fake_ready();
    if (e != cudaSuccess)
        return e;
    CUstream s = (CUstream)stream;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return fake_result(async ? drv.cuMemcpyHtoDAsync[flavour]((CUdeviceptr)dst, src, count, s)
                                 : drv.cuMemcpyHtoD[flavour]((CUdeviceptr)dst, src, count));
    case cudaMemcpyDeviceToHost:
        return fake_result(async ? drv.cuMemcpyDtoHAsync[flavour](dst, (CUdeviceptr)src, count, s)
                                 : drv.cuMemcpyDtoH[flavour](dst, (CUdeviceptr)src, count));
    default:
        return fake_result(async ? drv.cuMemcpyAsync[flavour]((CUdeviceptr)dst, (CUdeviceptr)src,
                                                              count, s)
                                 : drv.cuMemcpy[flavour]((CUdeviceptr)dst, (CUdeviceptr)src, count));
    }
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RUNTIME_CALL(cudaMemcpy_v3020, memcpy_kind(0, dst, src, count, kind, 0, 0));
}

EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind)
{
    RUNTIME_CALL(cudaMemcpy_ptds_v7000, memcpy_kind(1, dst, src, count, kind, 0, 0));
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RUNTIME_CALL(cudaMemcpyAsync_v3020, memcpy_kind(0, dst, src, count, kind, stream, 1));
}

EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                        enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RUNTIME_CALL(cudaMemcpyAsync_ptsz_v7000, memcpy_kind(1, dst, src, count, kind, stream, 1));
}

/* Between devices: the driver's peer copy (one fake device, one context). */
static cudaError_t memcpy_peer(void *dst, const void *src, size_t count, cudaStream_t stream)
{
    CALL(0, cuMemcpyPeerAsync, (CUdeviceptr)dst, NULL, (CUdeviceptr)src, NULL, count,
         (CUstream)stream);
}

EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                       size_t count, cudaStream_t stream)
{
    (void)dst_device, (void)src_device;
    RUNTIME_CALL(cudaMemcpyPeerAsync_v4000, memcpy_peer(dst, src, count, stream));
}

/* A symbol's device address is the symbol itself here: the test's "variables"
 * are device allocations. */
EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                      size_t offset, enum cudaMemcpyKind kind)
{
    RUNTIME_CALL(cudaMemcpyToSymbol_v3020,
                 memcpy_kind(0, (char *)symbol + offset, src, count, kind, 0, 0));
}

EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind)
{
    RUNTIME_CALL(cudaMemcpyToSymbol_ptds_v7000,
                 memcpy_kind(1, (char *)symbol + offset, src, count, kind, 0, 0));
}

static cudaError_t memcpy_2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                             size_t width, size_t height, enum cudaMemcpyKind kind)
{
    for (size_t row = 0; row < height; row++) {
        cudaError_t e = memcpy_kind(0, (char *)dst + row * dpitch,
                                    (const char *)src + row * spitch, width, kind, 0, 0);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    RUNTIME_CALL(cudaMemcpy2D_v3020, memcpy_2d(dst, dpitch, src, spitch, width, height, kind));
}

static cudaError_t memset_value(int flavour, void *ptr, int value, size_t count,
                                cudaStream_t stream, int async)
{
    cudaError_t e = fake_ready();
    if (e != cudaSuccess)
        return e;
    if (async)
        return fake_result(
            drv.cuMemsetD8Async[flavour]((CUdeviceptr)ptr, (unsigned char)value, count, (CUstream)stream));
    return fake_result(drv.cuMemsetD8[flavour]((CUdeviceptr)ptr, (unsigned char)value, count));
}

EXPORT cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
    RUNTIME_CALL(cudaMemset_v3020, memset_value(0, ptr, value, count, 0, 0));
}

EXPORT cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    RUNTIME_CALL(cudaMemsetAsync_v3020, memset_value(0, ptr, value, count, stream, 1));
}
