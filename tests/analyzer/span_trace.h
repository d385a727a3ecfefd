/*
 * span_trace.h - synthetic trace files of marked Python functions' calls
 * (PI_REC_SPAN) with the records around them, for the span tests: the
 * calls are the test's own, and the file gives them in the order a
 * recorder writes them, each at its return (a thread's inner calls before
 * the outer ones), the other records at their end.
 */
#ifndef PI_SPAN_TRACE_H
#define PI_SPAN_TRACE_H

#include <stdint.h>

#include "analysis/pass/analysis.h"

#define MS 1000000ull
#define US 1000ull

/* One call of a marked function, as the test made it. */
struct span_call {
    uint32_t tid;
    uint64_t start, end;
    uint32_t name; /* a string id of span_trace_name */
    unsigned kind, depth;
    int raised;
    uint64_t cpu_ns;
    int64_t device_bytes;
};

/* span_trace_begin - start a new trace: no names, no records */
void span_trace_begin(void);

/* span_trace_name - a new string id that names @text (every call a new id, even for a text
 * named before) */
uint32_t span_trace_name(const char *text);

/* span_trace_call - @call's span record, written at its return */
void span_trace_call(const struct span_call *call);

/* span_trace_call_resident - @call whose resident memory the recorder read: it changed by
 * @bytes (a PI_REC_SPAN_HOST_MEMORY just before its record, as the recorder writes it) */
void span_trace_call_resident(const struct span_call *call, int64_t bytes);

/* span_trace_record - any other record, written once the time is @arrival */
void span_trace_record(const struct pi_record *record, uint64_t arrival);

/* span_trace_wait - thread @tid waited from @start for @dur ns in a wait of @kind
 * (enum pi_wait_kind: a lock, a condition, a sleep) */
void span_trace_wait(uint32_t tid, unsigned kind, uint64_t start, uint64_t dur);

/* span_trace_sync - a synchronisation of thread @tid from @start for @dur ns (the host blocks) */
void span_trace_sync(uint32_t tid, uint64_t start, uint64_t dur);

/* span_trace_gpu - @dur ns of GPU work at @start, its duration known at @arrival */
void span_trace_gpu(uint64_t start, uint64_t dur, uint64_t arrival);

/* span_trace_write - the trace file, names first, then every record in arrival order; its path */
const char *span_trace_write(void);

/* span_trace_analyse - the analysis of the file at @path, @exact or not, with @observer
 * (NULL: none), which then goes with its folder; the caller frees the analysis */
struct pi_analysis span_trace_analyse(const char *path, int exact,
                                      const struct pi_analysis_observer *observer);

/* span_trace_analyse_with - the same with @options (a warm-up asked for) */
struct pi_analysis span_trace_analyse_with(const char *path,
                                           const struct pi_analysis_options *options);

/* span_quantile - the @q quantile of @count sorted values, between order statistics as
 * numpy's default method takes it */
double span_quantile(const uint64_t *sorted, size_t count, double q);

#endif
