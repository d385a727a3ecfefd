/*
 * fake_runtime.c - libcudart.so.13 for tests, compiled against the real
 * cuda_runtime_api.h. Like the real runtime it reaches the driver only
 * through dlopen("libcuda.so.1") + cuGetProcAddress_v2: it asks for cuInit
 * and cuGetProcAddress itself, then resolves its whole table eagerly, the
 * per-thread-stream flavours with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
 *
 * Kernels are registered with __cudaRegisterFunction (host stub -> device
 * name), as nvcc-generated code does, and loaded on first launch.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef CUresult (*get_proc_t)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

/* The driver table: one pointer per entry and flavour. */
#define DRIVER_TABLE(X)                                                                           \
    X(cuInit, 2000, CUresult (*)(unsigned))                                                       \
    X(cuMemAlloc, 3020, CUresult (*)(CUdeviceptr *, size_t))                                      \
    X(cuMemFree, 3020, CUresult (*)(CUdeviceptr))                                                 \
    X(cuMemAllocAsync, 11020, CUresult (*)(CUdeviceptr *, size_t, CUstream))                      \
    X(cuMemFreeAsync, 11020, CUresult (*)(CUdeviceptr, CUstream))                                 \
    X(cuMemAllocManaged, 6000, CUresult (*)(CUdeviceptr *, size_t, unsigned))                     \
    X(cuMemAllocHost, 3020, CUresult (*)(void **, size_t))                                        \
    X(cuMemHostAlloc, 2020, CUresult (*)(void **, size_t, unsigned))                              \
    X(cuMemFreeHost, 2000, CUresult (*)(void *))                                                  \
    X(cuMemHostRegister, 6050, CUresult (*)(void *, size_t, unsigned))                            \
    X(cuMemHostUnregister, 4000, CUresult (*)(void *))                                            \
    X(cuMemcpy, 4000, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t))                             \
    X(cuMemcpyAsync, 4000, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))              \
    X(cuMemcpyHtoD, 3020, CUresult (*)(CUdeviceptr, const void *, size_t))                        \
    X(cuMemcpyDtoH, 3020, CUresult (*)(void *, CUdeviceptr, size_t))                              \
    X(cuMemcpyHtoDAsync, 3020, CUresult (*)(CUdeviceptr, const void *, size_t, CUstream))         \
    X(cuMemcpyDtoHAsync, 3020, CUresult (*)(void *, CUdeviceptr, size_t, CUstream))               \
    X(cuMemsetD8, 3020, CUresult (*)(CUdeviceptr, unsigned char, size_t))                         \
    X(cuMemsetD8Async, 3020, CUresult (*)(CUdeviceptr, unsigned char, size_t, CUstream))          \
    X(cuStreamCreate, 2000, CUresult (*)(CUstream *, unsigned))                                   \
    X(cuStreamSynchronize, 2000, CUresult (*)(CUstream))                                          \
    X(cuStreamWaitEvent, 3020, CUresult (*)(CUstream, CUevent, unsigned))                         \
    X(cuCtxSynchronize, 2000, CUresult (*)(void))                                                 \
    X(cuEventCreate, 2000, CUresult (*)(CUevent *, unsigned))                                     \
    X(cuEventRecord, 2000, CUresult (*)(CUevent, CUstream))                                       \
    X(cuEventSynchronize, 2000, CUresult (*)(CUevent))                                            \
    X(cuEventElapsedTime, 12080, CUresult (*)(float *, CUevent, CUevent))                         \
    X(cuModuleLoadData, 2000, CUresult (*)(CUmodule *, const void *))                             \
    X(cuModuleGetFunction, 2000, CUresult (*)(CUfunction *, CUmodule, const char *))              \
    X(cuLaunchKernel, 4000,                                                                       \
      CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,        \
                   unsigned, CUstream, void **, void **))                                         \
    X(cuLaunchKernelEx, 11060, CUresult (*)(const CUlaunchConfig *, CUfunction, void **, void **)) \
    X(cuGraphLaunch, 10000, CUresult (*)(CUgraphExec, CUstream))

#define SLOT(name, version, type) __typeof__(type) name[2]; /* [0] legacy, [1] per-thread stream */
static struct {
    DRIVER_TABLE(SLOT)
} drv;
#undef SLOT

static get_proc_t get_proc;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static cudaError_t driver_error = cudaSuccess;

static void load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    get_proc_t first = lib ? (get_proc_t)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (!first) {
        driver_error = cudaErrorInsufficientDriver;
        return;
    }
    void *init = NULL;
    CUdriverProcAddressQueryResult status;
    first("cuInit", &init, 2000, 0, &status);
    first("cuGetProcAddress", (void **)&get_proc, 11030, 0, &status);
    first("cuGetProcAddress", (void **)&get_proc, 12000, 0, &status);
    if (!init || !get_proc) {
        driver_error = cudaErrorInsufficientDriver;
        return;
    }
#define RESOLVE(name, version, type)                                                              \
    get_proc(#name, (void **)&drv.name[0], version, CU_GET_PROC_ADDRESS_DEFAULT, &status);        \
    get_proc(#name, (void **)&drv.name[1], version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, \
             &status);
    DRIVER_TABLE(RESOLVE)
#undef RESOLVE
    if (!drv.cuInit[0] || drv.cuInit[0](0) != CUDA_SUCCESS)
        driver_error = cudaErrorNoDevice;
}

static cudaError_t ready(void)
{
    pthread_once(&driver_once, load_driver);
    return driver_error;
}

static cudaError_t result(CUresult r)
{
    return r == CUDA_SUCCESS ? cudaSuccess : r == CUDA_ERROR_OUT_OF_MEMORY ? cudaErrorMemoryAllocation
                                                                           : cudaErrorUnknown;
}

#define CALL(flavour, name, ...)                                                                  \
    do {                                                                                          \
        cudaError_t e = ready();                                                                  \
        if (e != cudaSuccess)                                                                     \
            return e;                                                                             \
        return result(drv.name[flavour](__VA_ARGS__));                                            \
    } while (0)

/* ---- kernels: host stub -> device function name, loaded on first use ---- */

struct kernel {
    const void *stub;
    char name[256];
    CUfunction function;
    struct kernel *next;
};
static struct kernel *kernels;
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static CUmodule module;

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
    k->stub = host_function;
    snprintf(k->name, sizeof(k->name), "%s", device_name);
    pthread_mutex_lock(&kernels_lock);
    k->next = kernels;
    kernels = k;
    pthread_mutex_unlock(&kernels_lock);
}

static CUfunction function_of(const void *stub)
{
    CUfunction f = NULL;
    pthread_mutex_lock(&kernels_lock);
    for (struct kernel *k = kernels; k; k = k->next)
        if (k->stub == stub) {
            if (!k->function) {
                if (!module)
                    drv.cuModuleLoadData[0](&module, "fake image");
                drv.cuModuleGetFunction[0](&k->function, module, k->name);
            }
            f = k->function;
            break;
        }
    pthread_mutex_unlock(&kernels_lock);
    return f;
}

static cudaError_t launch(int flavour, const void *stub, dim3 grid, dim3 block, void **args,
                          size_t shared, cudaStream_t stream)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    CUfunction f = function_of(stub);
    if (!f)
        return cudaErrorInvalidDeviceFunction;
    return result(drv.cuLaunchKernel[flavour](f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                              (unsigned)shared, (CUstream)stream, args, NULL));
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                    size_t shared, cudaStream_t stream)
{
    return launch(0, func, grid, block, args, shared, stream);
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
                                         size_t shared, cudaStream_t stream)
{
    return launch(1, func, grid, block, args, shared, stream);
}

static cudaError_t launch_ex(int flavour, const cudaLaunchConfig_t *config, const void *func,
                             void **args)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    CUfunction f = function_of(func);
    if (!f)
        return cudaErrorInvalidDeviceFunction;
    CUlaunchConfig c;
    memset(&c, 0, sizeof(c));
    c.gridDimX = config->gridDim.x;
    c.blockDimX = config->blockDim.x;
    c.hStream = (CUstream)config->stream;
    return result(drv.cuLaunchKernelEx[flavour](&c, f, args, NULL));
}

EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                       void **args)
{
    return launch_ex(0, config, func, args);
}

EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                            void **args)
{
    return launch_ex(1, config, func, args);
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graph, cudaStream_t stream)
{
    CALL(0, cuGraphLaunch, (CUgraphExec)graph, (CUstream)stream);
}

/* ---- memory ---- */

EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
    CALL(0, cuMemAlloc, (CUdeviceptr *)ptr, size);
}

EXPORT cudaError_t cudaFree(void *ptr)
{
    /* as in the real runtime, freeing NULL still initialises it (the cudaFree(0) idiom) */
    if (!ptr)
        return ready();
    CALL(0, cuMemFree, (CUdeviceptr)ptr);
}

EXPORT cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
    CALL(0, cuMemAllocAsync, (CUdeviceptr *)ptr, size, (CUstream)stream);
}

EXPORT cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    CALL(0, cuMemFreeAsync, (CUdeviceptr)ptr, (CUstream)stream);
}

EXPORT cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    CALL(0, cuMemAllocManaged, (CUdeviceptr *)ptr, size, flags);
}

EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    CALL(0, cuMemAllocHost, ptr, size);
}

EXPORT cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    CALL(0, cuMemHostAlloc, ptr, size, flags);
}

EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    CALL(0, cuMemFreeHost, ptr);
}

EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    CALL(0, cuMemHostRegister, ptr, size, flags);
}

EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
    CALL(0, cuMemHostUnregister, ptr);
}

/* ---- copies ---- */

static cudaError_t memcpy_kind(int flavour, void *dst, const void *src, size_t count,
                               enum cudaMemcpyKind kind, cudaStream_t stream, int async)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    CUstream s = (CUstream)stream;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return result(async ? drv.cuMemcpyHtoDAsync[flavour]((CUdeviceptr)dst, src, count, s)
                            : drv.cuMemcpyHtoD[flavour]((CUdeviceptr)dst, src, count));
    case cudaMemcpyDeviceToHost:
        return result(async ? drv.cuMemcpyDtoHAsync[flavour](dst, (CUdeviceptr)src, count, s)
                            : drv.cuMemcpyDtoH[flavour](dst, (CUdeviceptr)src, count));
    default:
        return result(async ? drv.cuMemcpyAsync[flavour]((CUdeviceptr)dst, (CUdeviceptr)src, count, s)
                            : drv.cuMemcpy[flavour]((CUdeviceptr)dst, (CUdeviceptr)src, count));
    }
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return memcpy_kind(0, dst, src, count, kind, 0, 0);
}

EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind)
{
    return memcpy_kind(1, dst, src, count, kind, 0, 0);
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return memcpy_kind(0, dst, src, count, kind, stream, 1);
}

EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                        enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return memcpy_kind(1, dst, src, count, kind, stream, 1);
}

EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    for (size_t row = 0; row < height; row++) {
        cudaError_t e = memcpy_kind(0, (char *)dst + row * dpitch, (const char *)src + row * spitch,
                                    width, kind, 0, 0);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
    CALL(0, cuMemsetD8, (CUdeviceptr)ptr, (unsigned char)value, count);
}

EXPORT cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    CALL(0, cuMemsetD8Async, (CUdeviceptr)ptr, (unsigned char)value, count, (CUstream)stream);
}

/* ---- streams, events, synchronisation ---- */

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    CALL(0, cuStreamCreate, (CUstream *)stream, 0);
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    CALL(0, cuStreamSynchronize, (CUstream)stream);
}

EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    CALL(1, cuStreamSynchronize, (CUstream)stream);
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    CALL(0, cuCtxSynchronize);
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    CALL(0, cuEventCreate, (CUevent *)event, 0);
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    CALL(0, cuEventRecord, (CUevent)event, (CUstream)stream);
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    CALL(0, cuEventSynchronize, (CUevent)event);
}

EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    CALL(0, cuEventElapsedTime, ms, (CUevent)start, (CUevent)end);
}

EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    CALL(0, cuStreamWaitEvent, (CUstream)stream, (CUevent)event, flags);
}

/* ---- driver entry points for callers (PyTorch fetches its VMM calls here) ---- */

EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **pfn,
                                                    unsigned int version, unsigned long long flags,
                                                    enum cudaDriverEntryPointQueryResult *status)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    CUdriverProcAddressQueryResult driver_status;
    CUresult r = get_proc(symbol, pfn, (int)version, flags, &driver_status);
    if (status)
        *status = r == CUDA_SUCCESS ? cudaDriverEntryPointSuccess
                                    : cudaDriverEntryPointSymbolNotFound;
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorSymbolNotFound;
}

EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **pfn, unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult *status)
{
    return cudaGetDriverEntryPointByVersion(symbol, pfn, 13000, flags, status);
}

EXPORT cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}

EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    return error == cudaSuccess ? "no error" : "fake CUDA error";
}
