/*
 * nvtx_injection.c - NVTX ranges and marks, through NVTX's injection
 * interface: with NVTX_INJECTION64_PATH naming libprofinject.so, the
 * application's NVTX (and PyTorch's emit_nvtx) calls InitializeInjectionNvtx2
 * on first use, and we fill in the core callbacks. Push/pop ranges nest per
 * thread; start/end ranges may end on another thread.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <stdatomic.h>
#include <string.h>

#include "core/hook.h"

#define MAX_DEPTH 64
#define START_END_SLOTS 4096

struct open_range {
    uint64_t start;
    uint32_t name;
};

static __thread struct open_range stack[MAX_DEPTH] __attribute__((tls_model("initial-exec")));
static __thread int depth __attribute__((tls_model("initial-exec")));

static struct {
    _Atomic uint64_t id; /* 0: free */
    uint64_t start;
    uint32_t name;
} started[START_END_SLOTS];
static _Atomic uint64_t next_id = 1;

static uint32_t name_of(const nvtxEventAttributes_t *attributes)
{
    if (!attributes)
        return 0;
    if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii)
        return pi_intern_cstr(attributes->message.ascii);
    return pi_intern_cstr("(NVTX range)");
}

static int push(uint32_t name)
{
    if (depth < MAX_DEPTH)
        stack[depth] = (struct open_range){pi_clock_ticks(), name};
    return depth++;
}

static int NVTX_API range_push_a(const char *message)
{
    if (!pi_hook_active())
        return depth;
    return push(message ? pi_intern_cstr(message) : 0);
}

static int NVTX_API range_push_ex(const nvtxEventAttributes_t *attributes)
{
    if (!pi_hook_active())
        return depth;
    return push(name_of(attributes));
}

static int NVTX_API range_pop(void)
{
    if (depth <= 0)
        return -1;
    depth--;
    if (depth < MAX_DEPTH && pi_hook_active()) {
        uint64_t now = pi_clock_ticks();
        pi_emit(PI_REC_NVTX_RANGE, 0, stack[depth].start, now - stack[depth].start,
                stack[depth].name, (uint64_t)depth, 0);
    }
    return depth;
}

static nvtxRangeId_t start_range(uint32_t name)
{
    uint64_t id = atomic_fetch_add(&next_id, 1);
    for (unsigned probe = 0; probe < START_END_SLOTS; probe++) {
        unsigned slot = (unsigned)((id + probe) % START_END_SLOTS);
        uint64_t expected = 0;
        if (atomic_compare_exchange_strong(&started[slot].id, &expected, id)) {
            started[slot].start = pi_clock_ticks();
            started[slot].name = name;
            return id;
        }
    }
    return 0; /* too many open at once: this one goes unrecorded */
}

static nvtxRangeId_t NVTX_API range_start_a(const char *message)
{
    return pi_hook_active() ? start_range(message ? pi_intern_cstr(message) : 0) : 0;
}

static nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t *attributes)
{
    return pi_hook_active() ? start_range(name_of(attributes)) : 0;
}

static void NVTX_API range_end(nvtxRangeId_t id)
{
    for (unsigned probe = 0; id && probe < START_END_SLOTS; probe++) {
        unsigned slot = (unsigned)((id + probe) % START_END_SLOTS);
        if (atomic_load(&started[slot].id) != id)
            continue;
        uint64_t start = started[slot].start, now = pi_clock_ticks();
        uint32_t name = started[slot].name;
        atomic_store(&started[slot].id, 0);
        pi_emit(PI_REC_NVTX_RANGE, 0, start, now - start, name, (uint64_t)-1, 0);
        return;
    }
}

static void NVTX_API mark_a(const char *message)
{
    if (pi_hook_active())
        pi_emit(PI_REC_MARK, 0, pi_clock_ticks(), 0, 0, message ? pi_intern_cstr(message) : 0, 0);
}

static void NVTX_API mark_ex(const nvtxEventAttributes_t *attributes)
{
    if (pi_hook_active())
        pi_emit(PI_REC_MARK, 0, pi_clock_ticks(), 0, 0, name_of(attributes), 0);
}

static void set(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
    if (id < size && table[id])
        *table[id] = fn;
}

PI_EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    pi_ensure_init();
    const NvtxExportTableCallbacks *callbacks =
        (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!callbacks || callbacks->struct_size < sizeof(*callbacks) ||
        !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table)
        return 0;
    set(table, size, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)range_push_a);
    set(table, size, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)range_push_ex);
    set(table, size, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)range_pop);
    set(table, size, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)range_start_a);
    set(table, size, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)range_start_ex);
    set(table, size, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)range_end);
    set(table, size, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)mark_a);
    set(table, size, NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)mark_ex);
    return 1;
}
