/*
 * fake_driver.c - libcuda.so.1 for tests: the driver API subset PyTorch-like
 * programs use, compiled against the real cuda.h so every signature is the
 * real one, resolved the way the real driver is (exported symbols and
 * cuGetProcAddress by base name, version and per-thread-stream flag).
 *
 * Kernels take their duration from their first parameter (a uint64_t of
 * nanoseconds); graphs from the uint64_t their handle points at.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_device.h"

#define EXPORT __attribute__((visibility("default")))

struct fake_function {
    char name[256];
};
struct fake_event {
    uint64_t at;
    int recorded;
};

static int initialised;

/* Where a fake CUPTI wants to hear of finished GPU work (kind 0 kernel, 1 copy, 2 set). */
typedef void (*activity_sink)(int kind, uint64_t start, uint64_t end);
static activity_sink sink;

EXPORT void fake_cuda_set_activity_sink(activity_sink s)
{
    sink = s;
}

static void report(int kind, uint64_t start, uint64_t end)
{
    if (sink)
        sink(kind, start, end);
}
static int fake_context = 1;

/* ---- set-up ---- */

EXPORT CUresult CUDAAPI cuInit(unsigned int flags)
{
    (void)flags;
    initialised = 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDriverGetVersion(int *version)
{
    *version = 13000;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    *device = ordinal;
    return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    *count = 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = (CUcontext)&fake_context;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    (void)ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    *device = 0;
    return CUDA_SUCCESS;
}

/* ---- memory ---- */

EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
    free((void *)dptr);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
    (void)stream;
    return cuMemAlloc(dptr, bytes);
}
EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
    return cuMemAllocAsync(dptr, bytes, stream);
}

EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    (void)stream;
    return cuMemFree(dptr);
}
EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
    return cuMemFreeAsync(dptr, stream);
}

EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
    (void)flags;
    return cuMemAlloc(dptr, bytes);
}

EXPORT CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytes)
{
    *pp = malloc(bytes ? bytes : 1);
    return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    (void)flags;
    return cuMemAllocHost(pp, bytes);
}

EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytes, unsigned int flags)
{
    (void)p, (void)bytes, (void)flags;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    (void)p;
    return CUDA_SUCCESS;
}

/* Virtual memory management, as expandable segments use it. */
EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                    const CUmemAllocationProp *prop, unsigned long long flags)
{
    (void)prop, (void)flags;
    size_t *h = malloc(sizeof(size_t));
    *h = size;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    free((void *)(uintptr_t)handle);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                            CUdeviceptr addr, unsigned long long flags)
{
    (void)alignment, (void)addr, (void)flags;
    return cuMemAlloc(ptr, size);
}

EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    (void)size;
    return cuMemFree(ptr);
}

EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                 CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    (void)ptr, (void)size, (void)offset, (void)handle, (void)flags;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    (void)ptr, (void)size;
    return CUDA_SUCCESS;
}

/* ---- copies: synchronous ones wait for the device, asynchronous ones queue ---- */

static CUresult copy(void *dst, const void *src, size_t bytes, CUstream stream, int async)
{
    struct fake_stream *s = fake_stream_of(stream);
    if (!async)
        fake_sleep_until(fake_device_end());
    uint64_t duration = (uint64_t)(bytes / FAKE_COPY_BYTES_PER_NS) + 1000;
    uint64_t end = fake_enqueue(s, duration);
    report(1, end - duration, end);
    memmove(dst, src, bytes);
    if (!async)
        fake_sleep_until(end);
    return CUDA_SUCCESS;
}

#define SYNC_COPY(name, dst_t, src_t)                                                              \
    EXPORT CUresult CUDAAPI name(dst_t dst, src_t src, size_t bytes)                               \
    {                                                                                              \
        return copy((void *)dst, (const void *)src, bytes, NULL, 0);                               \
    }
#define ASYNC_COPY(name, dst_t, src_t)                                                             \
    EXPORT CUresult CUDAAPI name(dst_t dst, src_t src, size_t bytes, CUstream stream)              \
    {                                                                                              \
        return copy((void *)dst, (const void *)src, bytes, stream, 1);                             \
    }

SYNC_COPY(cuMemcpyHtoD_v2, CUdeviceptr, const void *)
SYNC_COPY(cuMemcpyHtoD_v2_ptds, CUdeviceptr, const void *)
SYNC_COPY(cuMemcpyDtoH_v2, void *, CUdeviceptr)
SYNC_COPY(cuMemcpyDtoH_v2_ptds, void *, CUdeviceptr)
SYNC_COPY(cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr)
SYNC_COPY(cuMemcpyDtoD_v2_ptds, CUdeviceptr, CUdeviceptr)
SYNC_COPY(cuMemcpy, CUdeviceptr, CUdeviceptr)
SYNC_COPY(cuMemcpy_ptds, CUdeviceptr, CUdeviceptr)
ASYNC_COPY(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *)
ASYNC_COPY(cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, const void *)
ASYNC_COPY(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr)
ASYNC_COPY(cuMemcpyDtoHAsync_v2_ptsz, void *, CUdeviceptr)
ASYNC_COPY(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr)
ASYNC_COPY(cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr)
ASYNC_COPY(cuMemcpyAsync, CUdeviceptr, CUdeviceptr)
ASYNC_COPY(cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr)

EXPORT CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n)
{
    fake_sleep_until(fake_device_end());
    uint64_t end = fake_enqueue(fake_stream_of(NULL), 1000);
    report(2, end - 1000, end);
    memset((void *)dst, value, n);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n,
                                        CUstream stream)
{
    fake_enqueue(fake_stream_of(stream), 1000);
    memset((void *)dst, value, n);
    return CUDA_SUCCESS;
}

/* ---- streams, events, synchronisation ---- */

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int flags)
{
    (void)flags;
    *stream = (CUstream)fake_stream_create();
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream stream)
{
    fake_stream_destroy(fake_stream_of(stream));
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream stream)
{
    fake_sleep_until(fake_stream_end(fake_stream_of(stream)));
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream stream)
{
    return cuStreamSynchronize(stream);
}

EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    fake_sleep_until(fake_device_end());
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int flags)
{
    (void)flags;
    *event = (CUevent)calloc(1, sizeof(struct fake_event));
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent event)
{
    free(event);
    return CUDA_SUCCESS;
}

/* An event takes the time the stream reaches it. */
EXPORT CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream)
{
    struct fake_event *e = (struct fake_event *)event;
    e->at = fake_enqueue(fake_stream_of(stream), 0);
    e->recorded = 1;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventRecord_ptsz(CUevent event, CUstream stream)
{
    return cuEventRecord(event, stream);
}

EXPORT CUresult CUDAAPI cuEventQuery(CUevent event)
{
    struct fake_event *e = (struct fake_event *)event;
    return fake_now_ns() >= e->at ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent event)
{
    fake_sleep_until(((struct fake_event *)event)->at);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    struct fake_event *a = (struct fake_event *)start, *b = (struct fake_event *)end;
    if (!a->recorded || !b->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fake_now_ns() < b->at)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)(b->at - a->at) / 1e6);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
    (void)flags;
    struct fake_event *e = (struct fake_event *)event;
    uint64_t now = fake_now_ns();
    if (e->at > now)
        fake_enqueue(fake_stream_of(stream), e->at - now);
    return CUDA_SUCCESS;
}

/* ---- modules and kernels ---- */

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    (void)image;
    *module = (CUmodule)calloc(1, 16);
    return CUDA_SUCCESS;
}

static CUfunction make_function(const char *name)
{
    struct fake_function *f = calloc(1, sizeof(*f));
    strncpy(f->name, name, sizeof(f->name) - 1);
    return (CUfunction)f;
}

EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    (void)module;
    *function = make_function(name);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
                                          CUjit_option *jit_options, void **jit_values,
                                          unsigned int jit_count, CUlibraryOption *options,
                                          void **values, unsigned int count)
{
    (void)code, (void)jit_options, (void)jit_values, (void)jit_count, (void)options;
    (void)values, (void)count;
    *library = (CUlibrary)calloc(1, 16);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
    (void)library;
    *kernel = (CUkernel)make_function(name);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction function)
{
    *name = ((struct fake_function *)function)->name;
    return CUDA_SUCCESS;
}

static uint64_t kernel_duration(void **params)
{
    return params && params[0] ? *(const uint64_t *)params[0] : 1000;
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                       CUstream stream, void **params, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)extra;
    uint64_t duration = kernel_duration(params);
    uint64_t end = fake_enqueue(fake_stream_of(stream), duration);
    report(0, end - duration, end);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                            unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                            CUstream stream, void **params, void **extra)
{
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                         void **params, void **extra)
{
    (void)f, (void)extra;
    uint64_t duration = kernel_duration(params);
    uint64_t end = fake_enqueue(fake_stream_of(config->hStream), duration);
    report(0, end - duration, end);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                              void **params, void **extra)
{
    return cuLaunchKernelEx(config, f, params, extra);
}

EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec graph, CUstream stream)
{
    fake_enqueue(fake_stream_of(stream), *(const uint64_t *)graph);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec graph, CUstream stream)
{
    return cuGraphLaunch(graph, stream);
}

/* ---- resolution ---- */

struct entry {
    const char *name;
    int version; /* the lowest version this entry point answers for */
    void *function;
    void *per_thread; /* the _ptsz/_ptds flavour, NULL when there is none */
};

#define E(name, version, fn, ptsz) {name, version, (void *)(fn), (void *)(ptsz)}
static const struct entry entries[] = {
    E("cuInit", 2000, cuInit, NULL),
    E("cuDriverGetVersion", 2020, cuDriverGetVersion, NULL),
    E("cuDeviceGet", 2000, cuDeviceGet, NULL),
    E("cuDeviceGetCount", 2000, cuDeviceGetCount, NULL),
    E("cuCtxGetCurrent", 4000, cuCtxGetCurrent, NULL),
    E("cuCtxSetCurrent", 4000, cuCtxSetCurrent, NULL),
    E("cuCtxGetDevice", 2000, cuCtxGetDevice, NULL),
    E("cuMemAlloc", 3020, cuMemAlloc_v2, NULL),
    E("cuMemFree", 3020, cuMemFree_v2, NULL),
    E("cuMemAllocAsync", 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz),
    E("cuMemFreeAsync", 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz),
    E("cuMemAllocManaged", 6000, cuMemAllocManaged, NULL),
    E("cuMemAllocHost", 3020, cuMemAllocHost_v2, NULL),
    E("cuMemHostAlloc", 2020, cuMemHostAlloc, NULL),
    E("cuMemFreeHost", 2000, cuMemFreeHost, NULL),
    E("cuMemHostRegister", 6050, cuMemHostRegister_v2, NULL),
    E("cuMemHostUnregister", 4000, cuMemHostUnregister, NULL),
    E("cuMemCreate", 10020, cuMemCreate, NULL),
    E("cuMemRelease", 10020, cuMemRelease, NULL),
    E("cuMemAddressReserve", 10020, cuMemAddressReserve, NULL),
    E("cuMemAddressFree", 10020, cuMemAddressFree, NULL),
    E("cuMemMap", 10020, cuMemMap, NULL),
    E("cuMemUnmap", 10020, cuMemUnmap, NULL),
    E("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
    E("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
    E("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
    E("cuMemcpy", 4000, cuMemcpy, cuMemcpy_ptds),
    E("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
    E("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
    E("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
    E("cuMemcpyAsync", 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz),
    E("cuMemsetD8", 3020, cuMemsetD8_v2, NULL),
    E("cuMemsetD8Async", 3020, cuMemsetD8Async, NULL),
    E("cuStreamCreate", 2000, cuStreamCreate, NULL),
    E("cuStreamDestroy", 4000, cuStreamDestroy_v2, NULL),
    E("cuStreamSynchronize", 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz),
    E("cuStreamWaitEvent", 3020, cuStreamWaitEvent, NULL),
    E("cuCtxSynchronize", 2000, cuCtxSynchronize, NULL),
    E("cuEventCreate", 2000, cuEventCreate, NULL),
    E("cuEventDestroy", 4000, cuEventDestroy_v2, NULL),
    E("cuEventRecord", 2000, cuEventRecord, cuEventRecord_ptsz),
    E("cuEventQuery", 2000, cuEventQuery, NULL),
    E("cuEventSynchronize", 2000, cuEventSynchronize, NULL),
    E("cuEventElapsedTime", 12080, cuEventElapsedTime_v2, NULL),
    E("cuModuleLoadData", 2000, cuModuleLoadData, NULL),
    E("cuModuleGetFunction", 2000, cuModuleGetFunction, NULL),
    E("cuLibraryLoadData", 12000, cuLibraryLoadData, NULL),
    E("cuLibraryGetKernel", 12000, cuLibraryGetKernel, NULL),
    E("cuFuncGetName", 12030, cuFuncGetName, NULL),
    E("cuLaunchKernel", 4000, cuLaunchKernel, cuLaunchKernel_ptsz),
    E("cuLaunchKernelEx", 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
    E("cuGraphLaunch", 10000, cuGraphLaunch, cuGraphLaunch_ptsz),
};

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *status);

static CUresult get_proc_address(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *status)
{
    *pfn = NULL;
    if (strcmp(symbol, "cuGetProcAddress") == 0 && version >= 12000) {
        *pfn = (void *)cuGetProcAddress_v2;
    } else {
        for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
            if (strcmp(entries[i].name, symbol) == 0 && version >= entries[i].version) {
                int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
                                 entries[i].per_thread;
                *pfn = per_thread ? entries[i].per_thread : entries[i].function;
                break;
            }
    }
    if (status)
        *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *status)
{
    return get_proc_address(symbol, pfn, version, flags, status);
}

/* the first, four-argument form (CUDA 11.3) */
EXPORT CUresult CUDAAPI cuGetProcAddress_v1(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags) __asm__("cuGetProcAddress");
EXPORT CUresult CUDAAPI cuGetProcAddress_v1(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags)
{
    return get_proc_address(symbol, pfn, version, flags, NULL);
}
