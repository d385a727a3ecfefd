/*
 * fake_runtime.c - libcudart.so.13 for tests, compiled against the real
 * cuda_runtime_api.h. Like the real runtime it reaches the driver only
 * through dlopen("libcuda.so.1") + cuGetProcAddress_v2: it asks for cuInit
 * and cuGetProcAddress itself, then resolves its whole table eagerly, the
 * per-thread-stream flavours with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
 *
 * Every exported entry point is a thin wrapper around a hidden
 * implementation, so the runtime never calls its own exported names through
 * the PLT (a preloaded object would see those calls twice), as the real one
 * does not. Calls that put work on the GPU are reported as runtime API calls
 * with their CUPTI callback ids (fake_activity.h). Launches are in
 * fake_runtime_launch.c, memory in fake_runtime_memory.c.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "fake_runtime.h"

struct fake_driver_table drv;
fake_api_fn fake_api_enter, fake_api_exit;

static get_proc_t get_proc;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static cudaError_t driver_error = cudaSuccess;

static void load_driver(void)
{
    /* FAKE_CUDA_NO_DRIVER=1: a machine without a driver, as the real runtime finds it */
    const char *no_driver = getenv("FAKE_CUDA_NO_DRIVER");
    void *lib = no_driver && *no_driver == '1' ? NULL
                                               : dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    get_proc_t first = lib ? (get_proc_t)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (!first) {
        driver_error = cudaErrorInsufficientDriver;
        return;
    }
    fake_api_enter = (fake_api_fn)dlsym(lib, "fake_cuda_api_enter");
    fake_api_exit = (fake_api_fn)dlsym(lib, "fake_cuda_api_exit");
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

cudaError_t fake_ready(void)
{
    pthread_once(&driver_once, load_driver);
    return driver_error;
}

cudaError_t fake_result(CUresult r)
{
    return r == CUDA_SUCCESS ? cudaSuccess : r == CUDA_ERROR_OUT_OF_MEMORY ? cudaErrorMemoryAllocation
                                                                           : cudaErrorUnknown;
}

/* ---- devices ---- */

/* As the real runtime: on failure the count is left as it was. */
static cudaError_t device_count(int *count)
{
    CALL(0, cuDeviceGetCount, count);
}

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    return device_count(count);
}

/* ---- streams, events, synchronisation ---- */

static cudaError_t stream_create(cudaStream_t *stream)
{
    CALL(0, cuStreamCreate, (CUstream *)stream, 0);
}

static cudaError_t stream_synchronize(int flavour, cudaStream_t stream)
{
    CALL(flavour, cuStreamSynchronize, (CUstream)stream);
}

static cudaError_t device_synchronize(void)
{
    CALL(0, cuCtxSynchronize);
}

static cudaError_t event_create(cudaEvent_t *event)
{
    CALL(0, cuEventCreate, (CUevent *)event, 0);
}

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream)
{
    CALL(0, cuEventRecord, (CUevent)event, (CUstream)stream);
}

static cudaError_t event_synchronize(cudaEvent_t event)
{
    CALL(0, cuEventSynchronize, (CUevent)event);
}

static cudaError_t event_elapsed(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    CALL(0, cuEventElapsedTime, ms, (CUevent)start, (CUevent)end);
}

static cudaError_t stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    CALL(0, cuStreamWaitEvent, (CUstream)stream, (CUevent)event, flags);
}

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    return stream_create(stream);
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return stream_synchronize(0, stream);
}

EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    return stream_synchronize(1, stream);
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    return device_synchronize();
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return event_create(event);
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return event_record(event, stream);
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    return event_synchronize(event);
}

EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    return event_elapsed(ms, start, end);
}

EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    return stream_wait_event(stream, event, flags);
}

/* ---- driver entry points for callers (PyTorch fetches its VMM calls here) ---- */

static cudaError_t entry_point(const char *symbol, void **pfn, unsigned int version,
                               unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *status)
{
    cudaError_t e = fake_ready();
    if (e != cudaSuccess)
        return e;
    CUdriverProcAddressQueryResult driver_status;
    CUresult r = get_proc(symbol, pfn, (int)version, flags, &driver_status);
    if (status)
        *status = r == CUDA_SUCCESS ? cudaDriverEntryPointSuccess
                                    : cudaDriverEntryPointSymbolNotFound;
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorSymbolNotFound;
}

EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **pfn,
                                                    unsigned int version, unsigned long long flags,
                                                    enum cudaDriverEntryPointQueryResult *status)
{
    return entry_point(symbol, pfn, version, flags, status);
}

EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **pfn, unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult *status)
{
    return entry_point(symbol, pfn, 13000, flags, status);
}

EXPORT cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}

EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    return error == cudaSuccess ? "no error" : "fake CUDA error";
}
