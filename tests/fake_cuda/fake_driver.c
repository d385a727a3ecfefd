/*
 * fake_driver.c - libcuda.so.1 for tests: the driver API subset PyTorch-like
 * programs use, compiled against the real cuda.h so every signature is the
 * real one, resolved the way the real driver is (exported symbols and
 * cuGetProcAddress by base name, version and per-thread-stream flag).
 * This file: set-up, the activity hooks a fake CUPTI listens to, and
 * resolution. Memory is in fake_memory.c, streams and work in fake_launch.c.
 */
#include <string.h>

#include "fake_device.h"
#include "fake_driver.h"

static int fake_context = 1;

/* ---- activity: what a CUPTI attached to this driver hears ---- */

static const struct fake_activity_sink *_Atomic sink;

EXPORT void fake_cuda_set_activity_sink(const struct fake_activity_sink *s)
{
    sink = s;
}

void fake_api_enter(int domain, int cbid)
{
    const struct fake_activity_sink *s = sink;
    if (s)
        s->api_enter(domain, cbid);
}

void fake_api_exit(int domain, int cbid)
{
    const struct fake_activity_sink *s = sink;
    if (s)
        s->api_exit(domain, cbid);
}

void fake_gpu_work(enum fake_work kind, uint64_t start_ns, uint64_t end_ns, const char *name,
                   CUstream stream)
{
    const struct fake_activity_sink *s = sink;
    if (s && end_ns != FAKE_NEVER) /* work behind a closed gate: its times are not known */
        s->gpu_work(kind, start_ns, end_ns, name, (uintptr_t)stream);
}

/* The runtime's calls, reported through the driver as the real runtime's are. */
EXPORT void fake_cuda_api_enter(int domain, int cbid)
{
    fake_api_enter(domain, cbid);
}

EXPORT void fake_cuda_api_exit(int domain, int cbid)
{
    fake_api_exit(domain, cbid);
}

/* ---- set-up ---- */

static CUresult init(unsigned int flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

static CUresult driver_version(int *version)
{
    *version = 13000;
    return CUDA_SUCCESS;
}

static CUresult device_get(CUdevice *device, int ordinal)
{
    *device = ordinal;
    return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult device_count(int *count)
{
    *count = 1;
    return CUDA_SUCCESS;
}

static CUresult ctx_get_current(CUcontext *ctx)
{
    *ctx = (CUcontext)&fake_context;
    return CUDA_SUCCESS;
}

static CUresult ctx_set_current(CUcontext ctx)
{
    (void)ctx;
    return CUDA_SUCCESS;
}

static CUresult ctx_get_device(CUdevice *device)
{
    *device = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuInit(unsigned int flags)
{
    return init(flags);
}

EXPORT CUresult CUDAAPI cuDriverGetVersion(int *version)
{
    return driver_version(version);
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    return device_get(device, ordinal);
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    return device_count(count);
}

EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
    return ctx_get_current(ctx);
}

EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    return ctx_set_current(ctx);
}

EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    return ctx_get_device(device);
}

/* ---- resolution ---- */

#define E(name, version, fn) {name, version, (void *)(fn), NULL}
static const struct fake_entry setup_entries[] = {
    E("cuInit", 2000, init),
    E("cuDriverGetVersion", 2020, driver_version),
    E("cuDeviceGet", 2000, device_get),
    E("cuDeviceGetCount", 2000, device_count),
    E("cuCtxGetCurrent", 4000, ctx_get_current),
    E("cuCtxSetCurrent", 4000, ctx_set_current),
    E("cuCtxGetDevice", 2000, ctx_get_device),
    {NULL, 0, NULL, NULL},
};
#undef E

static CUresult get_proc_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status);
static CUresult get_proc_v1(const char *symbol, void **pfn, int version, cuuint64_t flags);

static const struct fake_entry *find(const char *symbol, int version)
{
    const struct fake_entry *const parts[] = {setup_entries, fake_memory_entries,
                                              fake_launch_entries, fake_device_info_entries};
    for (size_t p = 0; p < sizeof(parts) / sizeof(parts[0]); p++)
        for (const struct fake_entry *e = parts[p]; e->name; e++)
            if (strcmp(e->name, symbol) == 0 && version >= e->version)
                return e;
    return NULL;
}

static CUresult get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *status)
{
    *pfn = NULL;
    if (strcmp(symbol, "cuGetProcAddress") == 0) {
        *pfn = version >= 12000 ? (void *)get_proc_v2 : (void *)get_proc_v1;
    } else {
        const struct fake_entry *e = find(symbol, version);
        if (e) {
            int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && e->per_thread;
            *pfn = per_thread ? e->per_thread : e->function;
        }
    }
    if (status)
        *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static CUresult get_proc_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status)
{
    return get_proc(symbol, pfn, version, flags, status);
}

static CUresult get_proc_v1(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    return get_proc(symbol, pfn, version, flags, NULL);
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *status)
{
    return get_proc(symbol, pfn, version, flags, status);
}

/* the first, four-argument form (CUDA 11.3) */
EXPORT CUresult CUDAAPI cuGetProcAddress_v1(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags) __asm__("cuGetProcAddress");
EXPORT CUresult CUDAAPI cuGetProcAddress_v1(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags)
{
    return get_proc(symbol, pfn, version, flags, NULL);
}
