/*
 * fake_launch.c - the work the fake driver puts on streams (copies, sets,
 * kernels, graphs), streams, events, modules and kernel handles.
 *
 * Kernels take their duration from their first parameter (a uint64_t of
 * nanoseconds); graphs from the uint64_t their handle points at. Each call
 * is reported as a driver API call with its CUPTI callback id, and the
 * work it queues with its device start and end (fake_activity.h).
 */
#include <cupti_driver_cbid.h>
#include <stdlib.h>
#include <string.h>

#include "fake_device.h"
#include "fake_driver.h"

#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

struct fake_function {
    char name[256];
    int is_kernel; /* a CUkernel of a library, not a CUfunction of a module */
};
struct fake_event {
    uint64_t at;
    int recorded;
};

/* ---- copies: synchronous ones wait for the device, asynchronous ones queue ---- */

static CUresult copy(void *dst, const void *src, size_t bytes, CUstream stream, int async)
{
    struct fake_stream *s = fake_stream_of(stream);
    if (!async)
        fake_stream_wait(NULL);
    uint64_t duration = (uint64_t)(bytes / FAKE_COPY_BYTES_PER_NS) + 1000;
    uint64_t end = fake_enqueue(s, duration);
    fake_gpu_work(FAKE_WORK_COPY, end - duration, end, NULL, stream);
    memmove(dst, src, bytes);
    if (!async)
        fake_sleep_until(end);
    return CUDA_SUCCESS;
}

/* One copy entry: its implementation for each flavour, and the exported symbols. */
#define SYNC_COPY(name, ptds, dst_t, src_t)                                                        \
    static CUresult name##_impl(dst_t dst, src_t src, size_t bytes)                               \
    {                                                                                              \
        DRIVER_CALL(CBID(name), copy((void *)dst, (const void *)src, bytes, NULL, 0));             \
    }                                                                                              \
    static CUresult ptds##_impl(dst_t dst, src_t src, size_t bytes)                               \
    {                                                                                              \
        DRIVER_CALL(CBID(ptds), copy((void *)dst, (const void *)src, bytes, NULL, 0));             \
    }                                                                                              \
    EXPORT CUresult CUDAAPI name(dst_t dst, src_t src, size_t bytes)                               \
    {                                                                                              \
        return name##_impl(dst, src, bytes);                                                       \
    }                                                                                              \
    EXPORT CUresult CUDAAPI ptds(dst_t dst, src_t src, size_t bytes)                               \
    {                                                                                              \
        return ptds##_impl(dst, src, bytes);                                                       \
    }
#define ASYNC_COPY(name, ptsz, dst_t, src_t)                                                       \
    static CUresult name##_impl(dst_t dst, src_t src, size_t bytes, CUstream stream)              \
    {                                                                                              \
        DRIVER_CALL(CBID(name), copy((void *)dst, (const void *)src, bytes, stream, 1));           \
    }                                                                                              \
    static CUresult ptsz##_impl(dst_t dst, src_t src, size_t bytes, CUstream stream)              \
    {                                                                                              \
        DRIVER_CALL(CBID(ptsz), copy((void *)dst, (const void *)src, bytes, stream, 1));           \
    }                                                                                              \
    EXPORT CUresult CUDAAPI name(dst_t dst, src_t src, size_t bytes, CUstream stream)              \
    {                                                                                              \
        return name##_impl(dst, src, bytes, stream);                                               \
    }                                                                                              \
    EXPORT CUresult CUDAAPI ptsz(dst_t dst, src_t src, size_t bytes, CUstream stream)              \
    {                                                                                              \
        return ptsz##_impl(dst, src, bytes, stream);                                               \
    }

SYNC_COPY(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, CUdeviceptr, const void *)
SYNC_COPY(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, void *, CUdeviceptr)
SYNC_COPY(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, CUdeviceptr, CUdeviceptr)
SYNC_COPY(cuMemcpy, cuMemcpy_ptds, CUdeviceptr, CUdeviceptr)
ASYNC_COPY(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, const void *)
ASYNC_COPY(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, void *, CUdeviceptr)
ASYNC_COPY(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr)
ASYNC_COPY(cuMemcpyAsync, cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr)

/* Between devices: one fake device, so a copy on @stream like the others. */
static CUresult memcpy_peer_async(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src,
                                  CUcontext src_context, size_t bytes, CUstream stream)
{
    (void)dst_context, (void)src_context;
    DRIVER_CALL(CBID(cuMemcpyPeerAsync), copy((void *)dst, (const void *)src, bytes, stream, 1));
}

EXPORT CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src,
                                          CUcontext src_context, size_t bytes, CUstream stream)
{
    return memcpy_peer_async(dst, dst_context, src, src_context, bytes, stream);
}

/* ---- sets ---- */

static CUresult set(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream, int async)
{
    if (!async)
        fake_stream_wait(NULL);
    uint64_t end = fake_enqueue(fake_stream_of(stream), 1000);
    fake_gpu_work(FAKE_WORK_SET, end - 1000, end, NULL, stream);
    memset((void *)dst, value, n);
    if (!async)
        fake_sleep_until(end);
    return CUDA_SUCCESS;
}

static CUresult memset_d8(CUdeviceptr dst, unsigned char value, size_t n)
{
    DRIVER_CALL(CBID(cuMemsetD8_v2), set(dst, value, n, NULL, 0));
}

static CUresult memset_d8_async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream)
{
    DRIVER_CALL(CBID(cuMemsetD8Async), set(dst, value, n, stream, 1));
}

EXPORT CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n)
{
    return memset_d8(dst, value, n);
}

EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n,
                                        CUstream stream)
{
    return memset_d8_async(dst, value, n, stream);
}

/* ---- streams, events, synchronisation ---- */

static CUresult stream_create(CUstream *stream, unsigned int flags)
{
    (void)flags;
    *stream = (CUstream)fake_stream_create();
    return CUDA_SUCCESS;
}

static CUresult stream_destroy(CUstream stream)
{
    fake_stream_destroy(fake_stream_of(stream));
    return CUDA_SUCCESS;
}

static CUresult stream_synchronize(CUstream stream)
{
    fake_stream_wait(fake_stream_of(stream));
    return CUDA_SUCCESS;
}

static CUresult ctx_synchronize(void)
{
    fake_stream_wait(NULL);
    return CUDA_SUCCESS;
}

static CUresult event_create(CUevent *event, unsigned int flags)
{
    (void)flags;
    *event = (CUevent)calloc(1, sizeof(struct fake_event));
    return *event ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult event_destroy(CUevent event)
{
    free(event);
    return CUDA_SUCCESS;
}

/* An event takes the time the stream reaches it. */
static CUresult event_record(CUevent event, CUstream stream)
{
    struct fake_event *e = (struct fake_event *)event;
    e->at = fake_enqueue(fake_stream_of(stream), 0);
    e->recorded = 1;
    return CUDA_SUCCESS;
}

static CUresult event_query(CUevent event)
{
    struct fake_event *e = (struct fake_event *)event;
    return fake_now_ns() >= e->at ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static CUresult event_synchronize(CUevent event)
{
    fake_sleep_until(((struct fake_event *)event)->at);
    return CUDA_SUCCESS;
}

static CUresult event_elapsed(float *ms, CUevent start, CUevent end)
{
    struct fake_event *a = (struct fake_event *)start, *b = (struct fake_event *)end;
    if (!a->recorded || !b->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fake_now_ns() < b->at)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)(b->at - a->at) / 1e6);
    return CUDA_SUCCESS;
}

static CUresult stream_wait_event(CUstream stream, CUevent event, unsigned int flags)
{
    (void)flags;
    struct fake_event *e = (struct fake_event *)event;
    uint64_t now = fake_now_ns();
    if (e->at > now && e->at != FAKE_NEVER) /* behind a closed gate: not followed */
        fake_enqueue(fake_stream_of(stream), e->at - now);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int flags)
{
    return stream_create(stream, flags);
}
EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream stream)
{
    return stream_destroy(stream);
}
EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream stream)
{
    return stream_synchronize(stream);
}
EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream stream)
{
    return stream_synchronize(stream);
}
EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    return ctx_synchronize();
}
EXPORT CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int flags)
{
    return event_create(event, flags);
}
EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent event)
{
    return event_destroy(event);
}
EXPORT CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream)
{
    return event_record(event, stream);
}
EXPORT CUresult CUDAAPI cuEventRecord_ptsz(CUevent event, CUstream stream)
{
    return event_record(event, stream);
}
EXPORT CUresult CUDAAPI cuEventQuery(CUevent event)
{
    return event_query(event);
}
EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent event)
{
    return event_synchronize(event);
}
EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    return event_elapsed(ms, start, end);
}
EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
    return stream_wait_event(stream, event, flags);
}

/* ---- modules, libraries and their kernels ---- */

static CUfunction make_function(const char *name, int is_kernel)
{
    struct fake_function *f = calloc(1, sizeof(*f));
    if (f) {
        strncpy(f->name, name, sizeof(f->name) - 1);
        f->is_kernel = is_kernel;
    }
    return (CUfunction)f;
}

static CUresult module_load_data(CUmodule *module, const void *image)
{
    (void)image;
    *module = (CUmodule)calloc(1, 16);
    return CUDA_SUCCESS;
}

static CUresult module_get_function(CUfunction *function, CUmodule module, const char *name)
{
    (void)module;
    *function = make_function(name, 0);
    return CUDA_SUCCESS;
}

static CUresult library_load_data(CUlibrary *library, const void *code, CUjit_option *jit_options,
                                  void **jit_values, unsigned int jit_count,
                                  CUlibraryOption *options, void **values, unsigned int count)
{
    (void)code, (void)jit_options, (void)jit_values, (void)jit_count, (void)options;
    (void)values, (void)count;
    *library = (CUlibrary)calloc(1, 16);
    return CUDA_SUCCESS;
}

static CUresult library_get_kernel(CUkernel *kernel, CUlibrary library, const char *name)
{
    (void)library;
    *kernel = (CUkernel)make_function(name, 1);
    return CUDA_SUCCESS;
}

/* cuda.h: cuFuncGetName names a CUfunction, cuKernelGetName a CUkernel. */
static CUresult func_get_name(const char **name, CUfunction function)
{
    struct fake_function *f = (struct fake_function *)function;
    if (!name || !f)
        return CUDA_ERROR_INVALID_VALUE;
    if (f->is_kernel)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = f->name;
    return CUDA_SUCCESS;
}

static CUresult kernel_get_name(const char **name, CUkernel kernel)
{
    struct fake_function *f = (struct fake_function *)kernel;
    if (!name || !f)
        return CUDA_ERROR_INVALID_VALUE;
    if (!f->is_kernel)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = f->name;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    return module_load_data(module, image);
}
EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    return module_get_function(function, module, name);
}
EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
                                          CUjit_option *jit_options, void **jit_values,
                                          unsigned int jit_count, CUlibraryOption *options,
                                          void **values, unsigned int count)
{
    return library_load_data(library, code, jit_options, jit_values, jit_count, options, values,
                             count);
}
EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
    return library_get_kernel(kernel, library, name);
}
EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction function)
{
    return func_get_name(name, function);
}
EXPORT CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel kernel)
{
    return kernel_get_name(name, kernel);
}

/* ---- launches ---- */

static uint64_t kernel_duration(void **params)
{
    return params && params[0] ? *(const uint64_t *)params[0] : 1000;
}

static CUresult launch(CUfunction f, CUstream stream, void **params)
{
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t duration = kernel_duration(params);
    uint64_t end = fake_enqueue_kernel(fake_stream_of(stream), duration);
    fake_gpu_work(FAKE_WORK_KERNEL, end - duration, end, ((struct fake_function *)f)->name, stream);
    return CUDA_SUCCESS;
}

#define LAUNCH_PARAMS                                                                             \
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,   \
        unsigned shared, CUstream stream, void **params, void **extra
#define LAUNCH_ARGS f, gx, gy, gz, bx, by, bz, shared, stream, params, extra

static CUresult launch_kernel(LAUNCH_PARAMS)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)extra;
    DRIVER_CALL(CBID(cuLaunchKernel), launch(f, stream, params));
}

static CUresult launch_kernel_ptsz(LAUNCH_PARAMS)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)extra;
    DRIVER_CALL(CBID(cuLaunchKernel_ptsz), launch(f, stream, params));
}

static CUresult launch_kernel_ex(const CUlaunchConfig *config, CUfunction f, void **params,
                                 void **extra)
{
    (void)extra;
    DRIVER_CALL(CBID(cuLaunchKernelEx), launch(f, config->hStream, params));
}

static CUresult launch_kernel_ex_ptsz(const CUlaunchConfig *config, CUfunction f, void **params,
                                      void **extra)
{
    (void)extra;
    DRIVER_CALL(CBID(cuLaunchKernelEx_ptsz), launch(f, config->hStream, params));
}

#define COOPERATIVE_PARAMS                                                                        \
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,   \
        unsigned shared, CUstream stream, void **params
#define COOPERATIVE_ARGS f, gx, gy, gz, bx, by, bz, shared, stream, params

static CUresult launch_cooperative(COOPERATIVE_PARAMS)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    DRIVER_CALL(CBID(cuLaunchCooperativeKernel), launch(f, stream, params));
}

static CUresult launch_cooperative_ptsz(COOPERATIVE_PARAMS)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    DRIVER_CALL(CBID(cuLaunchCooperativeKernel_ptsz), launch(f, stream, params));
}

EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel(COOPERATIVE_PARAMS)
{
    return launch_cooperative(COOPERATIVE_ARGS);
}
EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(COOPERATIVE_PARAMS)
{
    return launch_cooperative_ptsz(COOPERATIVE_ARGS);
}

/* A graph runs as one kernel of its duration, named after the graph. */
static CUresult graph(CUgraphExec exec, CUstream stream)
{
    uint64_t duration = *(const uint64_t *)exec;
    uint64_t end = fake_enqueue(fake_stream_of(stream), duration);
    fake_gpu_work(FAKE_WORK_KERNEL, end - duration, end, "graph_kernel", stream);
    return CUDA_SUCCESS;
}

static CUresult graph_launch(CUgraphExec exec, CUstream stream)
{
    DRIVER_CALL(CBID(cuGraphLaunch), graph(exec, stream));
}

static CUresult graph_launch_ptsz(CUgraphExec exec, CUstream stream)
{
    DRIVER_CALL(CBID(cuGraphLaunch_ptsz), graph(exec, stream));
}

EXPORT CUresult CUDAAPI cuLaunchKernel(LAUNCH_PARAMS)
{
    return launch_kernel(LAUNCH_ARGS);
}
EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(LAUNCH_PARAMS)
{
    return launch_kernel_ptsz(LAUNCH_ARGS);
}
EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                         void **params, void **extra)
{
    return launch_kernel_ex(config, f, params, extra);
}
EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                              void **params, void **extra)
{
    return launch_kernel_ex_ptsz(config, f, params, extra);
}
EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
    return graph_launch(exec, stream);
}
EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream)
{
    return graph_launch_ptsz(exec, stream);
}

#define E(name, version, fn, ptsz) {name, version, (void *)(fn), (void *)(ptsz)}
const struct fake_entry fake_launch_entries[] = {
    E("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2_impl, cuMemcpyHtoD_v2_ptds_impl),
    E("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2_impl, cuMemcpyDtoH_v2_ptds_impl),
    E("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2_impl, cuMemcpyDtoD_v2_ptds_impl),
    E("cuMemcpy", 4000, cuMemcpy_impl, cuMemcpy_ptds_impl),
    E("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2_impl, cuMemcpyHtoDAsync_v2_ptsz_impl),
    E("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2_impl, cuMemcpyDtoHAsync_v2_ptsz_impl),
    E("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2_impl, cuMemcpyDtoDAsync_v2_ptsz_impl),
    E("cuMemcpyAsync", 4000, cuMemcpyAsync_impl, cuMemcpyAsync_ptsz_impl),
    E("cuMemcpyPeerAsync", 4000, memcpy_peer_async, NULL),
    E("cuMemsetD8", 3020, memset_d8, NULL),
    E("cuMemsetD8Async", 3020, memset_d8_async, NULL),
    E("cuStreamCreate", 2000, stream_create, NULL),
    E("cuStreamDestroy", 4000, stream_destroy, NULL),
    E("cuStreamSynchronize", 2000, stream_synchronize, stream_synchronize),
    E("cuStreamWaitEvent", 3020, stream_wait_event, NULL),
    E("cuCtxSynchronize", 2000, ctx_synchronize, NULL),
    E("cuEventCreate", 2000, event_create, NULL),
    E("cuEventDestroy", 4000, event_destroy, NULL),
    E("cuEventRecord", 2000, event_record, event_record),
    E("cuEventQuery", 2000, event_query, NULL),
    E("cuEventSynchronize", 2000, event_synchronize, NULL),
    E("cuEventElapsedTime", 12080, event_elapsed, NULL),
    E("cuModuleLoadData", 2000, module_load_data, NULL),
    E("cuModuleGetFunction", 2000, module_get_function, NULL),
    E("cuLibraryLoadData", 12000, library_load_data, NULL),
    E("cuLibraryGetKernel", 12000, library_get_kernel, NULL),
    E("cuFuncGetName", 12030, func_get_name, NULL),
    E("cuKernelGetName", 12030, kernel_get_name, NULL),
    E("cuLaunchKernel", 4000, launch_kernel, launch_kernel_ptsz),
    E("cuLaunchCooperativeKernel", 9000, launch_cooperative, launch_cooperative_ptsz),
    E("cuLaunchKernelEx", 11060, launch_kernel_ex, launch_kernel_ex_ptsz),
    E("cuGraphLaunch", 10000, graph_launch, graph_launch_ptsz),
    {NULL, 0, NULL, NULL},
};
#undef E
