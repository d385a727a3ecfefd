/* span_trace.c - synthetic traces of spans (see span_trace.h). */
#include "span_trace.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synthetic_trace.h"

/* A record and when the recorder writes it; @order keeps the order of equal times. */
struct arrival {
    uint64_t at, order;
    struct pi_record record;
};

static struct arrival *arrivals;
static size_t arrival_count, arrival_capacity;
static char names[256][128];
static uint32_t name_count;

void span_trace_begin(void)
{
    free(arrivals);
    arrivals = NULL;
    arrival_count = arrival_capacity = 0;
    name_count = 0;
}

uint32_t span_trace_name(const char *text)
{
    cr_assert_lt(name_count, 256);
    snprintf(names[name_count], sizeof(names[0]), "%s", text);
    return ++name_count; /* ids from 1 */
}

void span_trace_record(const struct pi_record *record, uint64_t arrival)
{
    if (arrival_count == arrival_capacity) {
        arrival_capacity = arrival_capacity ? arrival_capacity * 2 : 1024;
        arrivals = realloc(arrivals, arrival_capacity * sizeof(*arrivals));
        cr_assert(arrivals);
    }
    arrivals[arrival_count] = (struct arrival){arrival, arrival_count, *record};
    arrival_count++;
}

void span_trace_call(const struct span_call *c)
{
    struct pi_record r = {PI_REC_SPAN, 0, c->tid, c->start, c->end - c->start,
                          {PI_SPAN_ARG0(c->name, c->kind, c->depth, c->raised), c->cpu_ns,
                           (uint64_t)c->device_bytes}};
    span_trace_record(&r, c->end);
}

void span_trace_call_resident(const struct span_call *c, int64_t bytes)
{
    struct pi_record m = {PI_REC_SPAN_HOST_MEMORY, 0, c->tid, c->start, c->end - c->start,
                          {PI_SPAN_ARG0(c->name, c->kind, c->depth, c->raised), (uint64_t)bytes,
                           1ull << 30}};
    span_trace_record(&m, c->end);
    span_trace_call(c);
}

void span_trace_sync(uint32_t tid, uint64_t start, uint64_t dur)
{
    struct pi_record r = {PI_REC_GPU_SYNC,
                          PI_CUDA_FLAGS(PI_CUDA_API_cudaStreamSynchronize, PI_GPU_SYNC_STREAM, 0),
                          tid, start, dur, {0x1234, 0, PI_CUDA_WHERE(0, 0, 0)}};
    span_trace_record(&r, start + dur);
}

void span_trace_wait(uint32_t tid, unsigned kind, uint64_t start, uint64_t dur)
{
    struct pi_record r = {PI_REC_WAIT, 0, tid, start, dur, {kind, 0x5000, 0}};
    span_trace_record(&r, start + dur);
}

void span_trace_gpu(uint64_t start, uint64_t dur, uint64_t arrival)
{
    static uint64_t correlation = 1u << 30;
    struct pi_record r = {PI_REC_GPU_TIME, 0, 0, start, dur,
                          {correlation++, PI_GPU_TIMING_CUPTI, 0}};
    span_trace_record(&r, arrival);
}

static int by_arrival(const void *a, const void *b)
{
    const struct arrival *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

const char *span_trace_write(void)
{
    static uint8_t header[16384];
    static struct pi_record definitions[256 * 8];
    uint32_t slots = 0;
    for (uint32_t i = 0; i < name_count; i++)
        slots += synthetic_definition(definitions, slots, PI_REC_STRING, i + 1, names[i],
                                      (uint32_t)strlen(names[i]));
    const char *path = synthetic_begin();
    synthetic_frame(header, synthetic_header(header, PI_FORMAT_VERSION));
    if (slots)
        synthetic_records(definitions, slots);
    qsort(arrivals, arrival_count, sizeof(*arrivals), by_arrival);
    enum { PER_FRAME = 4096 };
    static struct pi_record frame[PER_FRAME];
    for (size_t i = 0; i < arrival_count; i += PER_FRAME) {
        uint32_t n = arrival_count - i < PER_FRAME ? (uint32_t)(arrival_count - i) : PER_FRAME;
        for (uint32_t k = 0; k < n; k++)
            frame[k] = arrivals[i + k].record;
        synthetic_records(frame, n);
    }
    synthetic_end();
    return path;
}

struct pi_analysis span_trace_analyse(const char *path, int exact,
                                      const struct pi_analysis_observer *observer)
{
    struct pi_analysis_options options = {.exact = exact, .observer = observer};
    return span_trace_analyse_with(path, &options);
}

struct pi_analysis span_trace_analyse_with(const char *path,
                                           const struct pi_analysis_options *options)
{
    struct pi_analysis a;
    char *paths[1] = {(char *)path};
    cr_assert_eq(pi_analysis_run(&a, options, paths, 1), 0);
    /* read once: the file and its folder go */
    char dir[256];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    unlink(path);
    if (slash) {
        *slash = '\0';
        rmdir(dir);
    }
    cr_assert_eq(a.process_count, 1);
    cr_assert_eq(a.processes[0].header.pid, getpid(), "the synthetic header is this process's");
    return a;
}

double span_quantile(const uint64_t *sorted, size_t count, double q)
{
    double position = q * (double)(count - 1);
    size_t below = (size_t)position;
    double a = (double)sorted[below], b = below + 1 < count ? (double)sorted[below + 1] : a;
    return a + (b - a) * (position - (double)below);
}
