/*
 * runtime_hook.h - what the runtime hook files share (cuda_runtime_hooks.c,
 * cuda_runtime_copy_hooks.c): the real function behind a hook, the
 * nesting mark, and one timed call on a stream.
 *
 * While a runtime call runs, driver calls it makes are marked nested, so
 * each logical operation is counted once.
 */
#ifndef PI_RUNTIME_HOOK_H
#define PI_RUNTIME_HOOK_H

#include <cuda_runtime_api.h>

#include "core/hook.h"
#include "cuda_common.h"
#include "gpu_timing/gpu_timing.h"

/* The real function behind hook @name, found on first use. */
#define RUNTIME_REAL(type, name)                                                                  \
    static type name##_real;                                                                      \
    if (!name##_real)                                                                             \
        name##_real = (type)pi_loaded_symbol(#name);                                              \
    if (!name##_real)                                                                             \
        return cudaErrorInitializationError;

#define ENTER() pi_cuda_runtime_depth++
#define LEAVE() pi_cuda_runtime_depth--

/* One runtime call timed on @stream: @before runs first, @call is the real
 * call, @emit records it (it sees r, corr, start and end: one clock reading
 * ends both the record and the GPU timing's note). Driver calls made inside
 * are marked nested. */
#define TIMED_CALL(stream, per_thread, before, call, emit)                                        \
    do {                                                                                          \
        if (!pi_hook_active())                                                                    \
            return call;                                                                          \
        uint64_t start = pi_clock_ticks();                                                        \
        struct pi_gpu_pair pair;                                                                  \
        before;                                                                                   \
        uint64_t corr = pi_cuda_next_correlation();                                               \
        pi_gpu_timing_start(&pair, stream, per_thread, start);                                    \
        pi_cuda_parent_correlation = corr;                                                        \
        ENTER();                                                                                  \
        cudaError_t r = call;                                                                     \
        LEAVE();                                                                                  \
        uint64_t end = pi_clock_ticks();                                                          \
        pi_gpu_timing_finish(&pair, corr, r != cudaSuccess, end);                                 \
        emit;                                                                                     \
        return r;                                                                                 \
    } while (0)

#endif
