/*
 * fake_cupti.c - libcupti.so.13 for tests: the activity API, compiled
 * against the real cupti.h so that records have the real layouts, and
 * behaving as cupti_activity.h and cupti_callbacks.h document it:
 *
 * - Records go into buffers the client hands over (buffer-requested
 *   callback); a buffer that cannot take the next record is full. Buffers
 *   are global, not per stream (CUpti_BuffersCallbackCompleteFunc).
 * - GPU records (kernel, memcpy, memset) are complete only once the device
 *   has finished the work. cuptiActivityFlushAll(0) returns the buffers
 *   whose records are all complete, full or not; with
 *   CUPTI_ACTIVITY_FLAG_FLUSH_FORCED it returns every buffer, incomplete
 *   records with zero timestamps (cuptiActivityGetNextRecord: "may contain
 *   invalid (0) timestamps"). On its own, CUPTI's worker thread returns only
 *   full buffers whose records are all complete (cuptiActivityFlushPeriod).
 * - Timestamps are CLOCK_REALTIME nanoseconds unless a timestamp callback
 *   was registered before the first kind was enabled
 *   (cuptiActivityRegisterTimestampCallback); GPU times are converted to
 *   that clock.
 * - API records (CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER) are made only while
 *   their kind is enabled, for the calls whose ids are on: enabling the kind
 *   turns every id of it on, cuptiActivityEnableRuntimeApi / EnableDriverApi
 *   turn one off or on. An id turned on while its kind is off makes no
 *   record: so CUPTI 13.0 behaved on an H200 (driver 580), whatever
 *   cupti_activity.h says. An EXTERNAL_CORRELATION record names "the correlation
 *   ID of the associated CUDA driver or runtime API record", so one is made
 *   only for a call that gets an API record.
 * - CUPTI_ACTIVITY_KIND_KERNEL serializes kernels; CONCURRENT_KERNEL does
 *   not. Records come as that kind.
 * - One subscriber at a time (cuptiSubscribe); FAKE_CUPTI_SUBSCRIBER=name
 *   plays a tool that already holds CUPTI (as Nsight Systems would).
 * - Dropped records are counted for cuptiActivityGetNumDroppedRecords,
 *   which resets the count. FAKE_CUPTI_DROP=N drops the first N GPU records.
 *
 * FAKE_CUPTI_ERROR=N makes enabling fail with error N. FAKE_CUPTI_LOG=path
 * appends one line per call a client makes (enable, push, flush, ...).
 */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_activity.h"

#define EXPORT __attribute__((visibility("default")))
#define STACK_MAX 64
#define CBIDS 2048

struct gpu_record {
    size_t offset;
    uint64_t done_ns; /* CLOCK_MONOTONIC: complete from then on */
};

struct buffer {
    uint8_t *data;
    size_t size, used;
    struct gpu_record *gpu;
    size_t gpu_count, gpu_capacity;
    uint64_t done_ns; /* all GPU records complete */
    struct buffer *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static CUpti_TimestampCallbackFunc timestamp_callback, clock_in_use;
static struct buffer *current, *full_head, **full_tail = &full_head;
static size_t dropped, drop_first;
static uint32_t next_correlation;
static int kinds[CUPTI_ACTIVITY_KIND_COUNT];
static unsigned char api_enabled[3][CBIDS]; /* [domain][cbid] */
static CUpti_ActivityThreadIdType thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static int subscribed, worker_started;
static unsigned flush_period_ms = 20;

static __thread uint64_t external[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE][STACK_MAX];
static __thread int external_depth[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
static __thread int api_depth, api_domain, api_cbid;
static __thread uint32_t api_correlation;
static __thread uint64_t api_start;

static void log_call(const char *format, ...)
{
    const char *path = getenv("FAKE_CUPTI_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    va_list args;
    va_start(args, format);
    vfprintf(f, format, args);
    va_end(args);
    fputc('\n', f);
    fclose(f);
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_cupti(void)
{
    return clock_in_use ? clock_in_use() : clock_ns(CLOCK_REALTIME);
}

/* CUPTI's clock may run at another rate than the device's (a timestamp
 * callback's need not be true nanoseconds): measured once, over 20 ms, when
 * recording starts, from readings of both clocks taken together. */
static double clock_rate = 1.0;
static uint64_t mono_reference, cupti_reference;

static void both_clocks(uint64_t *mono, uint64_t *cupti)
{
    uint64_t before = clock_ns(CLOCK_MONOTONIC);
    *cupti = now_cupti();
    *mono = (before + clock_ns(CLOCK_MONOTONIC)) / 2;
}

static void measure_clock_rate(void)
{
    uint64_t mono0, cupti0, mono1, cupti1;
    both_clocks(&mono0, &cupti0);
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
    both_clocks(&mono1, &cupti1);
    clock_rate = (double)(cupti1 - cupti0) / (double)(mono1 - mono0);
    mono_reference = mono1;
    cupti_reference = cupti1;
}

/* A device time (CLOCK_MONOTONIC) on CUPTI's clock, by linear interpolation,
 * as CUPTI converts GPU timestamps (cuptiActivityRegisterTimestampCallback). */
static uint64_t from_device(uint64_t mono_ns)
{
    return cupti_reference +
           (uint64_t)(int64_t)((double)((int64_t)mono_ns - (int64_t)mono_reference) * clock_rate);
}

/* ---- buffers ---- */

/* A buffer with room for @size more bytes, or NULL (the record is dropped). Lock held. */
static struct buffer *room_for(size_t size)
{
    if (current && current->used + size > current->size) {
        *full_tail = current;
        full_tail = &current->next;
        current = NULL;
    }
    if (!current && requested) {
        uint8_t *data = NULL;
        size_t capacity = 0, max_records = 0;
        requested(&data, &capacity, &max_records);
        if (data && capacity >= size) {
            current = calloc(1, sizeof(*current));
            current->data = data;
            current->size = capacity;
        }
    }
    return current;
}

static void append(const void *record, size_t size, uint64_t done_ns)
{
    pthread_mutex_lock(&lock);
    struct buffer *b = room_for(size);
    if (!b) {
        dropped++;
        pthread_mutex_unlock(&lock);
        return;
    }
    if (done_ns) {
        if (b->gpu_count == b->gpu_capacity) {
            b->gpu_capacity = b->gpu_capacity ? 2 * b->gpu_capacity : 64;
            b->gpu = realloc(b->gpu, b->gpu_capacity * sizeof(*b->gpu));
        }
        b->gpu[b->gpu_count++] = (struct gpu_record){b->used, done_ns};
        if (done_ns > b->done_ns)
            b->done_ns = done_ns;
    }
    memcpy(b->data + b->used, record, size);
    b->used += size;
    pthread_mutex_unlock(&lock);
}

/* Hand @b to the client; records not complete yet get zero timestamps (forced flush). */
static void deliver(struct buffer *b)
{
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    for (size_t i = 0; i < b->gpu_count; i++)
        if (b->gpu[i].done_ns > now) {
            CUpti_ActivityMemcpy6 *r = (CUpti_ActivityMemcpy6 *)(b->data + b->gpu[i].offset);
            r->start = r->end = 0; /* at the same offsets in kernel, memcpy and memset records */
        }
    if (completed)
        completed(NULL, 0, b->data, b->size, b->used);
    free(b->gpu);
    free(b);
}

/* Take the full buffers (and with @current_too the current one) that are
 * complete, or all of them when @forced; lock held. */
static struct buffer *take(int current_too, int forced)
{
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    if (current_too && current && current->used && (forced || current->done_ns <= now)) {
        *full_tail = current;
        full_tail = &current->next;
        current = NULL;
    }
    struct buffer *taken = NULL, **taken_tail = &taken;
    for (struct buffer **p = &full_head; *p;) {
        struct buffer *b = *p;
        if (forced || b->done_ns <= now) {
            *p = b->next;
            b->next = NULL;
            *taken_tail = b;
            taken_tail = &b->next;
        } else {
            p = &b->next;
        }
    }
    full_tail = &full_head;
    while (*full_tail)
        full_tail = &(*full_tail)->next;
    return taken;
}

static void deliver_all(struct buffer *taken)
{
    while (taken) {
        struct buffer *next = taken->next;
        deliver(taken);
        taken = next;
    }
}

/* CUPTI's own thread: full buffers go back once complete. */
static void *worker(void *unused)
{
    (void)unused;
    for (;;) {
        struct timespec pause = {0, (long)flush_period_ms * 1000000L};
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&lock);
        struct buffer *taken = take(0, 0);
        pthread_mutex_unlock(&lock);
        deliver_all(taken);
    }
    return NULL;
}

/* ---- what the driver tells us ---- */

static uint32_t thread_id(void)
{
    return thread_id_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? (uint32_t)syscall(SYS_gettid)
                                                                  : (uint32_t)pthread_self();
}

static void api_enter(int domain, int cbid)
{
    if (api_depth++ > 0)
        return; /* a driver call inside a runtime call is part of it */
    pthread_mutex_lock(&lock);
    api_correlation = ++next_correlation;
    pthread_mutex_unlock(&lock);
    api_domain = domain;
    api_cbid = cbid;
    api_start = now_cupti();
}

static void api_exit(int domain, int cbid)
{
    (void)domain, (void)cbid;
    if (--api_depth > 0)
        return;
    if (api_cbid < 0 || api_cbid >= CBIDS || !api_enabled[api_domain][api_cbid] ||
        !kinds[api_domain == FAKE_DOMAIN_RUNTIME ? CUPTI_ACTIVITY_KIND_RUNTIME
                                                 : CUPTI_ACTIVITY_KIND_DRIVER])
        return;
    if (kinds[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION])
        for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++)
            if (external_depth[k] > 0 && external_depth[k] <= STACK_MAX) {
                CUpti_ActivityExternalCorrelation e;
                memset(&e, 0, sizeof(e));
                e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
                e.externalKind = (CUpti_ExternalCorrelationKind)k;
                e.externalId = external[k][external_depth[k] - 1];
                e.correlationId = api_correlation;
                append(&e, sizeof(e), 0);
            }
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof(a));
    a.kind = api_domain == FAKE_DOMAIN_RUNTIME ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = (CUpti_CallbackId)api_cbid;
    a.start = api_start;
    a.end = now_cupti();
    a.processId = (uint32_t)getpid();
    a.threadId = thread_id();
    a.correlationId = api_correlation;
    append(&a, sizeof(a), 0);
}

static void gpu_work(enum fake_work kind, uint64_t start_ns, uint64_t end_ns, const char *name,
                     uintptr_t stream)
{
    union {
        CUpti_ActivityKernel10 kernel;
        CUpti_ActivityMemcpy6 memcpy;
        CUpti_ActivityMemset4 memset;
    } r;
    memset(&r, 0, sizeof(r));
    size_t size;
    if (kind == FAKE_WORK_KERNEL && (kinds[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ||
                                     kinds[CUPTI_ACTIVITY_KIND_KERNEL])) {
        r.kernel.kind = kinds[CUPTI_ACTIVITY_KIND_KERNEL] ? CUPTI_ACTIVITY_KIND_KERNEL
                                                          : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        r.kernel.name = name;
        r.kernel.streamId = (uint32_t)stream;
        size = sizeof(r.kernel);
    } else if (kind == FAKE_WORK_COPY && kinds[CUPTI_ACTIVITY_KIND_MEMCPY]) {
        r.memcpy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        r.memcpy.streamId = (uint32_t)stream;
        size = sizeof(r.memcpy);
    } else if (kind == FAKE_WORK_SET && kinds[CUPTI_ACTIVITY_KIND_MEMSET]) {
        r.memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        r.memset.streamId = (uint32_t)stream;
        size = sizeof(r.memset);
    } else {
        return;
    }
    pthread_mutex_lock(&lock);
    int drop = drop_first > 0;
    if (drop) {
        drop_first--;
        dropped++;
    }
    pthread_mutex_unlock(&lock);
    if (drop)
        return;
    /* start and end sit at the same offsets in all three; correlationId does not */
    r.memcpy.start = from_device(start_ns);
    r.memcpy.end = from_device(end_ns);
    if (size == sizeof(r.kernel))
        r.kernel.correlationId = api_correlation;
    else if (size == sizeof(r.memcpy))
        r.memcpy.correlationId = api_correlation;
    else
        r.memset.correlationId = api_correlation;
    append(&r, size, end_ns);
}

static const struct fake_activity_sink sink = {api_enter, api_exit, gpu_work};

/* The driver reports to us from now on. */
static int attach_to_driver(void)
{
    void *driver = dlopen("libcuda.so.1", RTLD_NOW);
    fake_set_sink_fn set_sink =
        driver ? (fake_set_sink_fn)dlsym(driver, "fake_cuda_set_activity_sink") : NULL;
    if (!set_sink)
        return -1;
    set_sink(&sink);
    return 0;
}

/* ---- the activity API ---- */

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc complete)
{
    log_call("register-callbacks");
    if (!request || !complete)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    requested = request;
    completed = complete;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc callback)
{
    log_call("register-timestamp-callback");
    if (!callback)
        return CUPTI_ERROR_INVALID_PARAMETER;
    timestamp_callback = callback;
    return CUPTI_SUCCESS;
}

static void set_domain(int domain, int enable)
{
    memset(api_enabled[domain], enable, CBIDS);
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    log_call("enable %d", (int)kind);
    const char *error = getenv("FAKE_CUPTI_ERROR");
    if (error && atoi(error))
        return (CUptiResult)atoi(error);
    if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&lock);
    int first = !worker_started;
    if (first) {
        worker_started = 1;
        clock_in_use = timestamp_callback; /* what was registered before the first kind */
        const char *drop = getenv("FAKE_CUPTI_DROP");
        drop_first = drop ? (size_t)atol(drop) : 0;
    }
    /* a new session (no GPU kind on): GPU times are converted with the clock as it is now */
    if (!kinds[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] && !kinds[CUPTI_ACTIVITY_KIND_KERNEL] &&
        !kinds[CUPTI_ACTIVITY_KIND_MEMCPY] && !kinds[CUPTI_ACTIVITY_KIND_MEMSET])
        measure_clock_rate();
    pthread_mutex_unlock(&lock);
    if (first) {
        if (attach_to_driver() != 0)
            return CUPTI_ERROR_NOT_INITIALIZED;
        pthread_t thread;
        pthread_create(&thread, NULL, worker, NULL);
        pthread_detach(thread);
    }
    kinds[kind] = 1;
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME)
        set_domain(FAKE_DOMAIN_RUNTIME, 1);
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER)
        set_domain(FAKE_DOMAIN_DRIVER, 1);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    log_call("disable %d", (int)kind);
    if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    kinds[kind] = 0;
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME)
        set_domain(FAKE_DOMAIN_RUNTIME, 0);
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER)
        set_domain(FAKE_DOMAIN_DRIVER, 0);
    return CUPTI_SUCCESS;
}

static CUptiResult enable_api(int domain, CUpti_CallbackId cbid, uint8_t enable)
{
    log_call("%s-api %u %u", domain == FAKE_DOMAIN_RUNTIME ? "runtime" : "driver", cbid, enable);
    if (cbid >= CBIDS)
        return CUPTI_ERROR_INVALID_PARAMETER;
    api_enabled[domain][cbid] = enable != 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(FAKE_DOMAIN_RUNTIME, cbid, enable);
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(FAKE_DOMAIN_DRIVER, cbid, enable);
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    log_call("thread-id-type %d", (int)type);
    thread_id_type = type;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
    *type = thread_id_type;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                          uint64_t id)
{
    log_call("push");
    if ((int)kind <= 0 || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (external_depth[kind] < STACK_MAX)
        external[kind][external_depth[kind]] = id;
    external_depth[kind]++;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                         uint64_t *last)
{
    log_call("pop");
    if ((int)kind <= 0 || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (external_depth[kind] <= 0)
        return CUPTI_ERROR_QUEUE_EMPTY;
    external_depth[kind]--;
    if (last)
        *last = external_depth[kind] < STACK_MAX ? external[kind][external_depth[kind]] : 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    log_call("flush %u", flag);
    pthread_mutex_lock(&lock);
    struct buffer *taken = take(1, (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
    pthread_mutex_unlock(&lock);
    deliver_all(taken);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    log_call("flush-period %u", ms);
    flush_period_ms = ms ? ms : 20;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream,
                                                     size_t *count)
{
    (void)context, (void)stream;
    if (!count)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    *count = dropped;
    dropped = 0;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

static size_t record_size(const CUpti_Activity *record)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return sizeof(CUpti_ActivityAPI);
    default:
        return 0;
    }
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + record_size(*record) : buffer;
    if (next >= buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    if (!record_size((CUpti_Activity *)next))
        return CUPTI_ERROR_INVALID_KIND;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    *timestamp = now_cupti();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **text)
{
    *text = result == CUPTI_SUCCESS                                  ? "CUPTI_SUCCESS"
            : result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                                     : "fake CUPTI error";
    return CUPTI_SUCCESS;
}

/* ---- subscribers: one at a time ---- */

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, const char *name, char *old,
                             size_t old_size)
{
    const char *other = getenv("FAKE_CUPTI_SUBSCRIBER");
    pthread_mutex_lock(&lock);
    CUptiResult r = CUPTI_SUCCESS;
    if ((other && *other) || subscribed) {
        if (old && old_size)
            snprintf(old, old_size, "%s", other && *other ? other : "another subscriber");
        r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    } else {
        subscribed = 1;
        *subscriber = (CUpti_SubscriberHandle)&subscribed;
    }
    pthread_mutex_unlock(&lock);
    log_call("subscribe %s %d", name ? name : "-", (int)r);
    return r;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                  void *userdata)
{
    (void)callback, (void)userdata;
    return subscribe(subscriber, NULL, NULL, 0);
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
                                     CUpti_CallbackFunc callback, void *userdata,
                                     CUpti_SubscriberParams *params)
{
    (void)callback, (void)userdata;
    if (params && params->structSize == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    return subscribe(subscriber, params ? params->subscriberName : NULL,
                     params ? params->oldSubscriberName : NULL, params ? params->oldSubscriberSize : 0);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    log_call("unsubscribe");
    if (!subscriber)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    subscribed = 0;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}
