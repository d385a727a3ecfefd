/*
 * cuda_common.h - what the CUDA hook files share: real CUDA functions
 * (pi_loaded_symbol finds them, since Python loads CUDA libraries with
 * RTLD_LOCAL), small ids for kernels and streams, page-locked host ranges,
 * the runtime-call nesting mark, and one emit function per CUDA record kind.
 *
 * Nothing here links against CUDA: types come from the toolkit's headers,
 * functions are looked up at run time.
 */
#ifndef PI_CUDA_COMMON_H
#define PI_CUDA_COMMON_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/guard.h"
#include "core/hook.h"
#include "core/loaded_symbols.h"
#include "profinject/trace_format.h"
#include "core/recorder.h"

/* pi_cuda_memory_hook_active - pi_hook_active for allocations and frees,
 * which are also followed while paused: a capture window that opens later
 * starts with the allocations live at that moment. */
static inline int pi_cuda_memory_hook_active(void)
{
    return pi_hook_active() || (pi_recorder_state() == PI_STATE_RUNNING && !pi_guarded());
}

/* Runtime calls that reach the driver: the driver records are marked nested. */
extern __thread int pi_cuda_runtime_depth __attribute__((tls_model("initial-exec")));
/* The correlation id of the runtime call in progress: nested driver records carry it. */
extern __thread uint64_t pi_cuda_parent_correlation __attribute__((tls_model("initial-exec")));
/* The kernel handle a nested driver launch saw, for the runtime launch
 * around it: named only when its host stub has no name (one lookup a launch). */
extern __thread const void *pi_cuda_last_function __attribute__((tls_model("initial-exec")));

/* pi_cuda_function_name - name id remembered for a CUfunction/CUkernel/host stub, 0 if none */
uint32_t pi_cuda_function_name(const void *function);

/* pi_cuda_remember_function - @function is called @name (from cuModuleGetFunction...) */
void pi_cuda_remember_function(const void *function, const char *name);

/* pi_cuda_host_stub_name - name id of a runtime launch's host stub (dladdr, cached) */
uint32_t pi_cuda_host_stub_name(const void *stub);

/* pi_cuda_stream_id - small id for a stream handle: 0 legacy default, 2 per-thread default */
uint32_t pi_cuda_stream_id(const void *stream);

/* Page-locked host ranges, to tell pinned copies from pageable ones. */
void pi_cuda_pinned_add(const void *pointer, uint64_t bytes);
void pi_cuda_pinned_remove(const void *pointer);
int pi_cuda_is_pinned(const void *pointer);

/* Correlation ids are handed to threads in blocks, so a launch costs a
 * thread-local increment rather than an atomic on a line every launching
 * thread shares. Ids stay unique in the process and small (Chrome flow ids
 * keep 32 bits). */
#define PI_CUDA_CORRELATION_BLOCK 1024u
extern _Atomic uint64_t pi_cuda_correlation_blocks;
extern __thread uint64_t pi_cuda_correlation_next __attribute__((tls_model("initial-exec")));
extern __thread uint64_t pi_cuda_correlation_end __attribute__((tls_model("initial-exec")));

/* pi_cuda_next_correlation - id linking a launch or copy to its GPU time */
static inline uint64_t pi_cuda_next_correlation(void)
{
    if (__builtin_expect(pi_cuda_correlation_next == pi_cuda_correlation_end, 0)) {
        pi_cuda_correlation_next =
            atomic_fetch_add_explicit(&pi_cuda_correlation_blocks, PI_CUDA_CORRELATION_BLOCK,
                                      memory_order_relaxed) +
            1;
        pi_cuda_correlation_end = pi_cuda_correlation_next + PI_CUDA_CORRELATION_BLOCK;
    }
    return pi_cuda_correlation_next++;
}

/* pi_cuda_nesting_bits - PI_CUDA_NESTED when a runtime call is in progress on this thread */
static inline unsigned pi_cuda_nesting_bits(void)
{
    return pi_cuda_runtime_depth > 0 ? PI_CUDA_NESTED : 0;
}

void pi_cuda_emit_alloc(unsigned api, unsigned kind, unsigned bits, uint64_t pointer,
                        uint64_t bytes, const void *stream, uint64_t start, int failed);
void pi_cuda_emit_free(unsigned api, unsigned kind, unsigned bits, uint64_t pointer,
                       uint64_t bytes, const void *stream, uint64_t start, int failed);
/* copies and launches end at @end, the reading that also ended their GPU timing note */
void pi_cuda_emit_copy(unsigned api, unsigned kind, unsigned bits, uint64_t bytes,
                       uint64_t correlation, const void *stream, uint64_t start, uint64_t end,
                       int failed);
void pi_cuda_emit_launch(unsigned api, unsigned kind, unsigned bits, uint64_t correlation,
                         uint32_t name, const void *stream, uint64_t start, uint64_t end,
                         int failed);
void pi_cuda_emit_sync(unsigned api, unsigned kind, unsigned bits, const void *handle,
                       uint64_t start, int failed);

/* pi_cuda_block_begin - the calling thread is about to block in CUDA call @api (a
 * synchronisation of @kind, or a copy of @kind that waits) since @start: kept as its wait in
 * flight until pi_wait_end, so a rank whose GPU waits for a collective's missing peers says
 * where. A stream's wait for an event queues, never blocks: nothing kept. */
static inline void pi_cuda_block_begin(unsigned api, unsigned kind,
                                       const void *handle, uint64_t start)
{
    if (api != PI_CUDA_API_cudaStreamWaitEvent)
        pi_wait_begin(PI_IN_FLIGHT_GPU_CALL(PI_CUDA_FLAGS(api, kind, 0)),
                      (uint64_t)(uintptr_t)handle, start);
}

#endif
