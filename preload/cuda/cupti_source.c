/*
 * cupti_source.c - GPU time from CUPTI's activity API, loaded with
 * dlopen(RTLD_LOCAL) and never linked (see gpu_timing.h).
 *
 * Each launch and copy pushes our correlation id as CUPTI's external
 * correlation; CUPTI reports that mapping (EXTERNAL_CORRELATION records)
 * and, once the GPU work is done, a kernel, copy or set record with its
 * GPU start and end. Buffers are handed to us on CUPTI's own thread; the
 * GPU_TIME records are written from there. CUPTI's clock is mapped onto
 * ours with one pair of readings taken when recording starts.
 */
#include "cupti_source.h"
#include "core/real_functions.h"

#include <cupti.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/guard.h"
#include "core/recorder.h"

#define BUFFER_SIZE (1u << 20)
#define MAP_SLOTS 65536 /* CUPTI correlation id -> ours, recent ones */
#define LATE_MAX 4096   /* GPU records whose mapping had not arrived yet */

static struct {
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*describe)(CUptiResult, const char **);
} cupti;

static uint64_t cupti_origin, ticks_origin;
static double ticks_per_ns;

static struct {
    _Atomic uint32_t key;
    uint64_t ours;
} correlation_map[MAP_SLOTS];

struct late_record {
    uint32_t correlation;
    uint64_t start, end;
};
static struct late_record late[LATE_MAX];
static size_t late_count;

static void *symbol(void *lib, const char *name)
{
    return pi_dlsym(lib, name);
}

int pi_cupti_start(char *reason, size_t size)
{
    static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(reason, size, "libcupti not found");
        return -1;
    }
    cupti.enable = symbol(lib, "cuptiActivityEnable");
    cupti.disable = symbol(lib, "cuptiActivityDisable");
    cupti.register_callbacks = symbol(lib, "cuptiActivityRegisterCallbacks");
    cupti.flush_all = symbol(lib, "cuptiActivityFlushAll");
    cupti.next_record = symbol(lib, "cuptiActivityGetNextRecord");
    cupti.push = symbol(lib, "cuptiActivityPushExternalCorrelationId");
    cupti.pop = symbol(lib, "cuptiActivityPopExternalCorrelationId");
    cupti.timestamp = symbol(lib, "cuptiGetTimestamp");
    cupti.describe = symbol(lib, "cuptiGetResultString");
    if (!cupti.enable || !cupti.disable || !cupti.register_callbacks || !cupti.flush_all ||
        !cupti.next_record || !cupti.push || !cupti.pop || !cupti.timestamp) {
        snprintf(reason, size, "libcupti lacks part of the activity API");
        return -1;
    }
    CUptiResult code = cupti.register_callbacks(pi_cupti_buffer_requested, pi_cupti_buffer_completed);
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
    size_t enabled = 0;
    for (; code == CUPTI_SUCCESS && enabled < sizeof(kinds) / sizeof(kinds[0]); enabled++)
        code = cupti.enable(kinds[enabled]);
    if (code != CUPTI_SUCCESS) {
        for (size_t i = 0; i + 1 < enabled; i++)
            cupti.disable(kinds[i]);
        const char *text = NULL;
        if (cupti.describe)
            cupti.describe(code, &text);
        snprintf(reason, size, "CUPTI refused activity recording: error %d (%s)", (int)code,
                 text ? text : "?");
        return (int)code;
    }
    cupti.timestamp(&cupti_origin);
    ticks_origin = pi_clock_ticks();
    ticks_per_ns = pi_recorder_ticks_per_second() / 1e9;
    snprintf(reason, size, "CUPTI activity API");
    return 0;
}

void pi_cupti_push(uint64_t correlation)
{
    cupti.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, correlation);
}

void pi_cupti_pop(void)
{
    uint64_t last;
    cupti.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

void pi_cupti_flush(void)
{
    cupti.flush_all(0);
}

void CUPTIAPI pi_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_SIZE);
    *size = *buffer ? BUFFER_SIZE : 0;
    *max_records = 0;
}

static void remember(uint32_t cupti_id, uint64_t ours)
{
    unsigned slot = cupti_id % MAP_SLOTS;
    correlation_map[slot].ours = ours;
    atomic_store_explicit(&correlation_map[slot].key, cupti_id, memory_order_release);
}

static uint64_t ours_of(uint32_t cupti_id)
{
    unsigned slot = cupti_id % MAP_SLOTS;
    if (atomic_load_explicit(&correlation_map[slot].key, memory_order_acquire) != cupti_id)
        return 0;
    return correlation_map[slot].ours;
}

/* GPU work with CUPTI's times: our clock's ticks, from the origin pair. */
static int emit_gpu_time(uint32_t cupti_id, uint64_t start, uint64_t end)
{
    uint64_t ours = ours_of(cupti_id);
    if (!ours)
        return 0;
    uint64_t ts = ticks_origin + (uint64_t)((double)(int64_t)(start - cupti_origin) * ticks_per_ns);
    pi_emit(PI_REC_GPU_TIME, 0, ts, (uint64_t)((double)(end - start) * ticks_per_ns), ours,
            PI_GPU_TIMING_CUPTI, 0);
    return 1;
}

static void gpu_work(uint32_t cupti_id, uint64_t start, uint64_t end)
{
    if (!emit_gpu_time(cupti_id, start, end) && late_count < LATE_MAX)
        late[late_count++] = (struct late_record){cupti_id, start, end};
}

void CUPTIAPI pi_cupti_buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid)
{
    (void)context, (void)stream, (void)size;
    int guard = pi_guard_enter();
    CUpti_Activity *record = NULL;
    while (valid && cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
        switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const CUpti_ActivityExternalCorrelation *e = (const void *)record;
            if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
                remember(e->correlationId, e->externalId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const void *)record;
            gpu_work(k->correlationId, k->start, k->end);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *m = (const void *)record;
            gpu_work(m->correlationId, m->start, m->end);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const void *)record;
            gpu_work(m->correlationId, m->start, m->end);
            break;
        }
        default:
            break;
        }
    }
    /* records whose mapping came in this buffer, after them */
    size_t kept = 0;
    for (size_t i = 0; i < late_count; i++)
        if (!emit_gpu_time(late[i].correlation, late[i].start, late[i].end))
            late[kept++] = late[i];
    late_count = kept;
    free(buffer);
    pi_guard_restore(guard);
}
