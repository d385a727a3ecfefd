/*
 * driver_hook.h - what the driver wrapper files share: the table of
 * entries (driver_entries.h) and the macros that write both exported
 * flavours of one wrapper body.
 *
 * The exported functions are the wrappers: the legacy flavour under the
 * driver's symbol name (cuMemAlloc_v2), the per-thread-stream flavour
 * under its own (cuLaunchKernel_ptsz); each calls the real function of
 * its own flavour.
 */
#ifndef PI_DRIVER_HOOK_H
#define PI_DRIVER_HOOK_H

#include <cuda.h>

#include "core/hook.h"
#include "cuda_common.h"
#include "driver_entries.h"

#define PI_UNPAREN(...) __VA_ARGS__

#define REAL(id, flavour, type) ((type)pi_driver_real(id, flavour))
#define BITS() (PI_CUDA_DRIVER | pi_cuda_nesting_bits())
/* nested records carry the runtime call's correlation id */
#define CORRELATION() (pi_cuda_runtime_depth > 0 ? pi_cuda_parent_correlation : pi_cuda_next_correlation())

/* Two exported flavours of one wrapper body: legacy and per-thread stream. */
#define FLAVOURS(body, legacy_name, per_thread_name, params, args)                                \
    PI_EXPORT CUresult CUDAAPI legacy_name params                                                 \
    {                                                                                             \
        return body(0, PI_UNPAREN args);                                                          \
    }                                                                                             \
    PI_EXPORT CUresult CUDAAPI per_thread_name params                                             \
    {                                                                                             \
        return body(1, PI_UNPAREN args);                                                          \
    }
#define ONE_FLAVOUR(body, legacy_name, params, args)                                              \
    PI_EXPORT CUresult CUDAAPI legacy_name params                                                 \
    {                                                                                             \
        return body(0, PI_UNPAREN args);                                                          \
    }

#endif
