/*
 * fake_runtime.h - what the parts of the fake libcudart.so.13 share
 * (fake_runtime.c: the driver table and API reporting; fake_runtime_launch.c;
 * fake_runtime_memory.c). Everything here is hidden: the parts call each
 * other directly, never through an exported name.
 */
#ifndef FAKE_RUNTIME_H
#define FAKE_RUNTIME_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_runtime_cbid.h>

#include "fake_activity.h"

#define EXPORT __attribute__((visibility("default")))
#define CBID(name) CUPTI_RUNTIME_TRACE_CBID_##name

typedef CUresult (*get_proc_t)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

/* The driver table: one pointer per entry and flavour. */
#define DRIVER_TABLE(X)                                                                           \
    X(cuInit, 2000, CUresult (*)(unsigned))                                                       \
    X(cuDeviceGetCount, 2000, CUresult (*)(int *))                                                \
    X(cuMemAlloc, 3020, CUresult (*)(CUdeviceptr *, size_t))                                      \
    X(cuMemFree, 3020, CUresult (*)(CUdeviceptr))                                                 \
    X(cuMemAllocAsync, 11020, CUresult (*)(CUdeviceptr *, size_t, CUstream))                      \
    X(cuMemAllocFromPoolAsync, 11020, CUresult (*)(CUdeviceptr *, size_t, CUmemoryPool, CUstream)) \
    X(cuMemFreeAsync, 11020, CUresult (*)(CUdeviceptr, CUstream))                                 \
    X(cuMemPoolGetAttribute, 11020, CUresult (*)(CUmemoryPool, CUmemPool_attribute, void *))      \
    X(cuMemPoolSetAttribute, 11020, CUresult (*)(CUmemoryPool, CUmemPool_attribute, void *))      \
    X(cuMemPoolTrimTo, 11020, CUresult (*)(CUmemoryPool, size_t))                                 \
    X(cuDeviceGetMemPool, 11020, CUresult (*)(CUmemoryPool *, CUdevice))                          \
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
    X(cuMemcpyPeerAsync, 4000,                                                                    \
      CUresult (*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream))             \
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
    X(cuLibraryLoadData, 12000,                                                                   \
      CUresult (*)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,                  \
                   CUlibraryOption *, void **, unsigned))                                         \
    X(cuLibraryGetKernel, 12000, CUresult (*)(CUkernel *, CUlibrary, const char *))               \
    X(cuKernelGetName, 12030, CUresult (*)(const char **, CUkernel))                              \
    X(cuLaunchKernel, 4000,                                                                       \
      CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,        \
                   unsigned, CUstream, void **, void **))                                         \
    X(cuLaunchCooperativeKernel, 9000,                                                            \
      CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,        \
                   unsigned, CUstream, void **))                                                  \
    X(cuLaunchKernelEx, 11060, CUresult (*)(const CUlaunchConfig *, CUfunction, void **, void **)) \
    X(cuGraphLaunch, 10000, CUresult (*)(CUgraphExec, CUstream))

#define SLOT(name, version, type) __typeof__(type) name[2]; /* [0] legacy, [1] per-thread stream */
struct fake_driver_table {
    DRIVER_TABLE(SLOT)
};
extern struct fake_driver_table drv;
#undef SLOT

/* fake_ready - the driver loaded and initialised: cudaSuccess, or why not */
cudaError_t fake_ready(void);

/* fake_result - the runtime error for a driver result */
cudaError_t fake_result(CUresult r);

/* The runtime reports its calls to CUPTI through the driver. */
extern fake_api_fn fake_api_enter, fake_api_exit;

#define CALL(flavour, name, ...)                                                                  \
    do {                                                                                          \
        cudaError_t e = fake_ready();                                                             \
        if (e != cudaSuccess)                                                                     \
            return e;                                                                             \
        return fake_result(drv.name[flavour](__VA_ARGS__));                                       \
    } while (0)

/* One runtime API call of callback id @cbid around @expression, as CUPTI sees it. */
#define RUNTIME_CALL(cbid, expression)                                                            \
    do {                                                                                          \
        int reported_ = fake_ready() == cudaSuccess && fake_api_enter;                            \
        if (reported_)                                                                            \
            fake_api_enter(FAKE_DOMAIN_RUNTIME, CBID(cbid));                                      \
        cudaError_t runtime_result_ = expression;                                                 \
        if (reported_)                                                                            \
            fake_api_exit(FAKE_DOMAIN_RUNTIME, CBID(cbid));                                       \
        return runtime_result_;                                                                   \
    } while (0)

#endif
