/* cuda_common.c - shared pieces of the CUDA hooks (see cuda_common.h). */
#include "cuda_common.h"
#include "device_info.h"
#include "live_allocations.h"

#include <cuda.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "callsite/call_sites.h"
#include "core/guard.h"
#include "core/recorder.h"

__thread int pi_cuda_runtime_depth __attribute__((tls_model("initial-exec")));
__thread const void *pi_cuda_last_function __attribute__((tls_model("initial-exec")));
__thread uint64_t pi_cuda_parent_correlation __attribute__((tls_model("initial-exec")));

/* ---- pointer -> id, lock-free, for kernels and streams ---- */

#define POINTER_SLOTS 16384

struct pointer_slot {
    _Atomic uintptr_t key;
    _Atomic uint32_t value;
};

struct pointer_table {
    struct pointer_slot slots[POINTER_SLOTS];
};

static struct pointer_table function_names, stream_ids;
static _Atomic uint32_t next_stream_id = 3;

static uint64_t hash_pointer(uintptr_t p)
{
    return (p ^ (p >> 17)) * 0x9E3779B97F4A7C15ull;
}

static uint32_t table_get(struct pointer_table *t, const void *pointer)
{
    uintptr_t key = (uintptr_t)pointer;
    uint64_t h = hash_pointer(key);
    for (unsigned probe = 0; probe < 64; probe++) {
        struct pointer_slot *s = &t->slots[(h + probe) % POINTER_SLOTS];
        uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == key)
            return atomic_load_explicit(&s->value, memory_order_acquire);
        if (k == 0)
            return 0;
    }
    return 0;
}

static void table_put(struct pointer_table *t, const void *pointer, uint32_t value)
{
    uintptr_t key = (uintptr_t)pointer;
    uint64_t h = hash_pointer(key);
    for (unsigned probe = 0; probe < 64; probe++) {
        struct pointer_slot *s = &t->slots[(h + probe) % POINTER_SLOTS];
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&s->key, &expected, key) || expected == key) {
            atomic_store_explicit(&s->value, value, memory_order_release);
            return;
        }
    }
}

uint32_t pi_cuda_function_name(const void *function)
{
    return function ? table_get(&function_names, function) : 0;
}

void pi_cuda_remember_function(const void *function, const char *name)
{
    if (!function || !name)
        return;
    int guard = pi_guard_enter();
    uint32_t id = pi_intern_cstr(name);
    pi_guard_restore(guard);
    if (id)
        table_put(&function_names, function, id);
}

uint32_t pi_cuda_host_stub_name(const void *stub)
{
    uint32_t id = pi_cuda_function_name(stub);
    if (id || !stub)
        return id;
    /* once per kernel: the stub's symbol is the kernel's mangled name */
    int saved = errno;
    int guard = pi_guard_enter();
    Dl_info info;
    if (dladdr(stub, &info) && info.dli_sname && info.dli_saddr == stub)
        pi_cuda_remember_function(stub, info.dli_sname);
    pi_guard_restore(guard);
    errno = saved;
    return pi_cuda_function_name(stub);
}

uint32_t pi_cuda_stream_id(const void *stream)
{
    if ((uintptr_t)stream <= 2)
        return (uint32_t)(uintptr_t)stream;
    uint32_t id = table_get(&stream_ids, stream);
    if (!id) {
        id = atomic_fetch_add(&next_stream_id, 1);
        table_put(&stream_ids, stream, id);
    }
    return id;
}

/* ---- page-locked host ranges ---- */

#define PINNED_RANGES 4096
static struct {
    _Atomic uintptr_t begin;
    _Atomic uintptr_t end;
} pinned[PINNED_RANGES];
static _Atomic uint32_t pinned_used;

void pi_cuda_pinned_add(const void *pointer, uint64_t bytes)
{
    for (uint32_t i = 0; i < PINNED_RANGES; i++) {
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&pinned[i].begin, &expected, (uintptr_t)pointer)) {
            atomic_store(&pinned[i].end, (uintptr_t)pointer + bytes);
            uint32_t used;
            while ((used = atomic_load(&pinned_used)) <= i &&
                   !atomic_compare_exchange_weak(&pinned_used, &used, i + 1))
                ;
            return;
        }
    }
}

void pi_cuda_pinned_remove(const void *pointer)
{
    uint32_t used = atomic_load(&pinned_used);
    for (uint32_t i = 0; i < used; i++)
        if (atomic_load(&pinned[i].begin) == (uintptr_t)pointer) {
            atomic_store(&pinned[i].end, 0);
            atomic_store(&pinned[i].begin, 0);
            return;
        }
}

int pi_cuda_is_pinned(const void *pointer)
{
    uintptr_t p = (uintptr_t)pointer;
    uint32_t used = atomic_load_explicit(&pinned_used, memory_order_relaxed);
    for (uint32_t i = 0; i < used; i++) {
        uintptr_t begin = atomic_load_explicit(&pinned[i].begin, memory_order_relaxed);
        if (begin && p >= begin && p < atomic_load_explicit(&pinned[i].end, memory_order_relaxed))
            return 1;
    }
    return 0;
}

/* Ids are handed to threads in blocks (cuda_common.h). */
_Atomic uint64_t pi_cuda_correlation_blocks;
__thread uint64_t pi_cuda_correlation_next __attribute__((tls_model("initial-exec")));
__thread uint64_t pi_cuda_correlation_end __attribute__((tls_model("initial-exec")));

/* ---- records ---- */

static uint64_t where(const void *stream, uint32_t stack)
{
    return PI_CUDA_WHERE(pi_cuda_stream_id(stream), 0, stack);
}

/* The device of the calling thread's current context (allocations only: one driver call). */
static unsigned current_device(void)
{
    static CUresult (*get_device)(CUdevice *);
    static int looked;
    if (!looked) {
        get_device = (CUresult(*)(CUdevice *))pi_loaded_symbol("cuCtxGetDevice");
        looked = 1;
    }
    CUdevice device = 0;
    if (!get_device || get_device(&device) != CUDA_SUCCESS)
        return 0;
    return (unsigned)device;
}

static uint16_t flags(unsigned api, unsigned subtype, unsigned bits, int failed)
{
    return PI_CUDA_FLAGS(api, subtype, bits | (failed ? PI_FLAG_FAILED : 0));
}

/* What the device had when a request for it failed: one driver call, on failures only. */
static void device_memory_at_failure(uint64_t ts, unsigned device)
{
    static CUresult (*get_info)(size_t *, size_t *);
    static int looked;
    if (!looked) {
        get_info = (CUresult(*)(size_t *, size_t *))pi_loaded_symbol("cuMemGetInfo_v2");
        looked = 1;
    }
    size_t free_bytes = 0, total_bytes = 0;
    if (get_info && get_info(&free_bytes, &total_bytes) == CUDA_SUCCESS)
        pi_emit(PI_REC_DEVICE_MEMORY, 0, ts, 0, free_bytes, total_bytes, device);
}

void pi_cuda_emit_alloc(unsigned api, unsigned kind, unsigned bits, uint64_t pointer,
                        uint64_t bytes, const void *stream, uint64_t start, int failed)
{
    uint64_t end = pi_clock_ticks();
    int saved = errno;
    /* nested driver records repeat their parent: no stack walk for them */
    int top = !(bits & PI_CUDA_NESTED), full = top && !failed;
    int on_device = !pi_gpu_alloc_on_host(kind);
    int recording = atomic_load_explicit(&pi_recording, memory_order_relaxed) != 0;
    /* while paused only the live-allocation table needs this: no stack walk. A failed
     * request gets one too: it is rare, and what a job dies of */
    uint32_t stack =
        top && recording ? pi_call_site_alloc(flags(api, kind, bits, failed), start, pointer) : 0;
    unsigned device = top && on_device ? current_device() : 0;
    if (top && on_device && recording && !failed) /* the first time: what the device is */
        pi_cuda_note_device(device, start);
    uint64_t place = PI_CUDA_WHERE(pi_cuda_stream_id(stream), device, stack);
    if (full)
        pi_live_alloc(flags(api, kind, bits, failed), start, end - start, pointer, bytes, place);
    else
        pi_emit(PI_REC_GPU_ALLOC, flags(api, kind, bits, failed), start, end - start, pointer,
                bytes, place);
    if (top && failed && on_device && recording)
        device_memory_at_failure(end, device);
    errno = saved;
}

void pi_cuda_emit_free(unsigned api, unsigned kind, unsigned bits, uint64_t pointer,
                       uint64_t bytes, const void *stream, uint64_t start, int failed)
{
    uint64_t end = pi_clock_ticks();
    if (!(bits & PI_CUDA_NESTED))
        pi_live_free(flags(api, kind, bits, failed), start, end - start, pointer, bytes,
                     where(stream, 0));
    else
        pi_emit(PI_REC_GPU_FREE, flags(api, kind, bits, failed), start, end - start, pointer,
                bytes, where(stream, 0));
}

void pi_cuda_emit_copy(unsigned api, unsigned kind, unsigned bits, uint64_t bytes,
                       uint64_t correlation_id, const void *stream, uint64_t start, uint64_t end,
                       int failed)
{
    pi_emit(PI_REC_GPU_COPY, flags(api, kind, bits, failed), start, end - start, bytes,
            correlation_id, where(stream, 0));
}

void pi_cuda_emit_launch(unsigned api, unsigned kind, unsigned bits, uint64_t correlation_id,
                         uint32_t name, const void *stream, uint64_t start, uint64_t end,
                         int failed)
{
    pi_emit(PI_REC_GPU_LAUNCH, flags(api, kind, bits, failed), start, end - start, correlation_id,
            name, where(stream, 0));
    /* a runtime launch and the driver launch inside it are one launch */
    if (!(bits & PI_CUDA_NESTED) && !failed && pi_call_site_launch_due())
        pi_call_site_launch(flags(api, kind, bits, failed), start, name);
}

void pi_cuda_emit_sync(unsigned api, unsigned kind, unsigned bits, const void *handle,
                       uint64_t start, int failed)
{
    uint64_t end = pi_clock_ticks();
    pi_emit(PI_REC_GPU_SYNC, flags(api, kind, bits, failed), start, end - start,
            (uint64_t)(uintptr_t)handle, 0, where(NULL, 0));
}
