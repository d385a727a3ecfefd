/*
 * spans.h - the calls of marked Python functions (PI_REC_SPAN, format 15),
 * counted per process by name and kind: how many, how long (total and
 * percentiles), their thread CPU time, the device memory they left behind,
 * the process's resident memory they changed (the long calls: format 16),
 * how many raised, from how many threads.
 *
 * Memory: a row per name and kind. While its file is read a row holds a
 * histogram of the calls' durations (every duration with --exact); once the
 * file is read the percentiles the reports give are taken from it and it is
 * let go, so a job of 10,000 ranks keeps some hundred bytes a row of each,
 * whatever the number of calls.
 */
#ifndef PI_SPANS_H
#define PI_SPANS_H

#include <stdint.h>

#include "analysis/model/model.h"
#include "reader/summary_record.h"

/* The percentiles kept of each row once its file is read: p50, p90, p95, p99, p99.9 and the
 * longest, the levels every latency table of the reports gives. */
#define PI_SPAN_QUANTILE_COUNT 6
extern const double pi_span_quantile_levels[PI_SPAN_QUANTILE_COUNT];

/* A file with more names than this counts the calls of the others apart (unlisted_calls). */
#define PI_SPAN_ROWS_MAX 4096

struct pi_span_row {
    char *name;    /* the function as the recorder named it; NULL while its file is read */
    unsigned kind; /* enum pi_span_kind */
    uint64_t count, total_ns;
    /* the calling threads' CPU time over the calls whose CPU was read (the recorder reads it
     * only for names whose calls last long enough to afford it: PI_SPAN_CPU_UNMEASURED) */
    uint64_t cpu_ns, cpu_calls;
    int64_t device_bytes;  /* the change of the device memory held over the calls, summed */
    /* the change of the process's resident memory over the calls whose resident memory the
     * recorder read (as for the CPU time, the calls of names long enough), summed */
    int64_t host_bytes;
    uint64_t host_calls;
    uint64_t raised;       /* calls that ended by an exception */
    uint64_t threads;      /* distinct threads that made them */
    double quantile_ns[PI_SPAN_QUANTILE_COUNT]; /* once the file is read */
    struct pi_histogram *durations; /* while the file is read; NULL after */
};

/* What the framework said of a call (PI_REC_SPAN_NOTE, format 16): why torch.compile
 * compiled a frame again. */
#define PI_SPAN_NOTES_MAX 64
struct pi_span_note {
    uint64_t start_ns; /* the call's entry */
    unsigned kind;     /* its kind (enum pi_span_kind) */
    uint32_t name_id, text_id; /* while its file is read */
    char *name, *text; /* once it is read */
};

struct pi_span_lookup;

struct pi_spans {
    struct pi_span_row *rows; /* in the order their names were first called */
    size_t count, capacity;
    uint64_t unlisted_calls; /* calls of names past PI_SPAN_ROWS_MAX */
    struct pi_span_note *notes; /* the first PI_SPAN_NOTES_MAX, in the order they came */
    size_t note_count;
    uint64_t notes_unkept;
    /* the span whose calls count the steps (span_steps.h): "AdamW.step"; NULL: none */
    char *steps_name;
    struct pi_span_lookup *lookup; /* while the file is read (spans.c) */
};

/* pi_spans_event - one PI_REC_SPAN record of @process; @exact keeps every duration */
void pi_spans_event(struct pi_process_info *process, const struct pi_event *ev, int exact);

/* pi_spans_host_memory - one PI_REC_SPAN_HOST_MEMORY record of @process: the resident memory
 * a call changed, before its PI_REC_SPAN record */
void pi_spans_host_memory(struct pi_process_info *process, const struct pi_event *ev, int exact);

/* pi_spans_note - one PI_REC_SPAN_NOTE record of @process */
void pi_spans_note(struct pi_process_info *process, const struct pi_event *ev);

/* pi_spans_summary - summary mode's count of calls of one name and depth by thread @tid over
 * an interval (their durations' buckets, no CPU time or exceptions) */
void pi_spans_summary(struct pi_process_info *process, uint32_t tid,
                      const struct pi_summary *summary, int exact);

/* pi_spans_finish_file - the file is read: name the rows (rows of one name and kind merge),
 * keep their percentiles, let the per-file state go */
void pi_spans_finish_file(struct pi_process_info *process, const struct pi_reader *reader);

/* pi_span_kind_name - "optimizer_step", "backward", ...: the kind as the reports write it */
const char *pi_span_kind_name(unsigned kind);

/* pi_spans_mean_ns - a row's mean duration, 0 without calls */
double pi_spans_mean_ns(const struct pi_span_row *row);

/* pi_spans_free - release what @process's span table holds */
void pi_spans_free(struct pi_process_info *process);

#endif
