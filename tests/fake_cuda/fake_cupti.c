/*
 * fake_cupti.c - libcupti.so.13 for tests: the activity API subset the
 * profiler uses, compiled against the real cupti.h so that the records it
 * hands out have the real layouts. The fake driver reports each kernel,
 * copy and set it runs; each becomes a record with its GPU start and end,
 * preceded by an external correlation record when the launching thread
 * had pushed one. FAKE_CUPTI_ERROR=N makes enabling fail with error N.
 */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))
#define STACK_MAX 64

static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static int enabled;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pending;
static size_t pending_size, pending_capacity;
static uint32_t next_correlation = 1;
static __thread uint64_t external[STACK_MAX];
static __thread int external_depth;

static void append(const void *record, size_t size)
{
    if (pending_size + size > pending_capacity) {
        pending_capacity = (pending_capacity + size) * 2;
        pending = realloc(pending, pending_capacity);
    }
    memcpy(pending + pending_size, record, size);
    pending_size += size;
}

/* Called by the fake driver, on the launching thread. */
static void sink(int kind, uint64_t start, uint64_t end)
{
    if (!enabled)
        return;
    pthread_mutex_lock(&lock);
    uint32_t correlation = next_correlation++;
    if (external_depth > 0) {
        CUpti_ActivityExternalCorrelation e;
        memset(&e, 0, sizeof(e));
        e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
        e.externalId = external[external_depth - 1];
        e.correlationId = correlation;
        append(&e, sizeof(e));
    }
    if (kind == 0) {
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof(k));
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = start;
        k.end = end;
        k.correlationId = correlation;
        append(&k, sizeof(k));
    } else if (kind == 1) {
        CUpti_ActivityMemcpy6 m;
        memset(&m, 0, sizeof(m));
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m.start = start;
        m.end = end;
        m.correlationId = correlation;
        append(&m, sizeof(m));
    } else {
        CUpti_ActivityMemset4 m;
        memset(&m, 0, sizeof(m));
        m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        m.start = start;
        m.end = end;
        m.correlationId = correlation;
        append(&m, sizeof(m));
    }
    pthread_mutex_unlock(&lock);
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc complete)
{
    requested = request;
    completed = complete;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    (void)kind;
    const char *error = getenv("FAKE_CUPTI_ERROR");
    if (error && atoi(error))
        return (CUptiResult)atoi(error);
    void *driver = dlopen("libcuda.so.1", RTLD_NOW);
    void (*set_sink)(void (*)(int, uint64_t, uint64_t)) =
        driver ? (void (*)(void (*)(int, uint64_t, uint64_t)))dlsym(driver, "fake_cuda_set_activity_sink")
               : NULL;
    if (!set_sink)
        return CUPTI_ERROR_NOT_INITIALIZED;
    set_sink(sink);
    enabled = 1;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    (void)kind;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                          uint64_t id)
{
    (void)kind;
    if (external_depth < STACK_MAX)
        external[external_depth] = id;
    external_depth++;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                         uint64_t *last)
{
    (void)kind;
    if (external_depth <= 0)
        return CUPTI_ERROR_QUEUE_EMPTY;
    external_depth--;
    if (last)
        *last = external_depth < STACK_MAX ? external[external_depth] : 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&lock);
    uint8_t *records = pending;
    size_t size = pending_size;
    pending = NULL;
    pending_size = pending_capacity = 0;
    pthread_mutex_unlock(&lock);
    if (size && requested && completed) {
        uint8_t *buffer;
        size_t capacity, max_records;
        requested(&buffer, &capacity, &max_records);
        if (buffer && capacity >= size) {
            memcpy(buffer, records, size);
            completed(NULL, 0, buffer, capacity, size);
        }
    }
    free(records);
    return CUPTI_SUCCESS;
}

static size_t record_size(const CUpti_Activity *record)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    default:
        return sizeof(CUpti_ActivityMemset4);
    }
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + record_size(*record) : buffer;
    if (next >= buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **text)
{
    *text = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "fake CUPTI error";
    return CUPTI_SUCCESS;
}
