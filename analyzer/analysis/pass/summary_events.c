/* summary_events.c - summaries and detail windows in the one pass (see summary_events.h). */
#include "summary_events.h"

#include <stdio.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/gpu/gpu_timeline.h"
#include "analysis/host/relay_steps.h"
#include "analysis/host/spans.h"
#include "analysis/host/steps.h"
#include "analysis/host/threads.h"
#include "analysis/host/working_span.h"
#include "analysis/sites/demangle.h"
#include "analysis/sites/python_sites.h"
#include "reader/summary_record.h"

/* The summary's histogram, sum and extremes into @e's durations, its bytes too. */
static void merge(struct pi_latency_entry *e, const struct pi_summary *s, uint64_t bytes)
{
    if (!e)
        return;
    for (uint32_t i = 0; i < s->body.bucket_count; i++)
        pi_histogram_add_buckets(&e->durations, PI_SUMMARY_BUCKET_INDEX(s->buckets[i]),
                                 PI_SUMMARY_BUCKET_COUNT(s->buckets[i]));
    pi_histogram_add_extent(&e->durations, s->body.total_ns, s->body.min_ns, s->body.max_ns);
    e->bytes += bytes;
}

static void kernel_name(const struct pi_reader *reader, uint64_t id, uint16_t flags, char *name,
                        size_t size)
{
    const char *kernel = id ? pi_reader_string(reader, id) : NULL;
    if (PI_CUDA_SUBTYPE(flags) == PI_GPU_GRAPH)
        kernel = "(CUDA graph)";
    pi_demangle(kernel ? kernel : "(unknown kernel)", name, size);
}

/* The thread of a summary's records: their count, span and @time_class's time. */
static void thread_time(struct pi_process_info *p, const struct pi_event *ev,
                        const struct pi_summary *s, unsigned time_class)
{
    struct pi_thread_info *t = ev->rec.tid ? pi_thread_of(p, ev->rec.tid) : NULL;
    if (!t)
        return;
    t->events += s->count;
    if (time_class < PI_TIME_CLASS_COUNT)
        t->time[time_class] += s->body.total_ns;
    if (t->tid == (uint32_t)p->header.pid) /* a worker's file reads: within its working span? */
        pi_working_span_summarised(p, ev->ts_ns, ev->ts_ns + ev->dur_ns, s->body.total_ns,
                                   time_class);
    if (ev->ts_ns < t->first_ns)
        t->first_ns = ev->ts_ns;
    if (ev->ts_ns + ev->dur_ns > t->last_ns)
        t->last_ns = ev->ts_ns + ev->dur_ns;
}

/* Launches and copies: the table of CUDA calls, then that of kernels or copies. */
static void cuda_call(struct pi_analysis *a, const struct pi_reader *reader,
                      struct pi_process_info *p, const struct pi_event *ev,
                      const struct pi_summary *s)
{
    const struct pi_summary_body *b = &s->body;
    merge(pi_latency_get(&a->calls, "cuda", pi_cuda_api_name(PI_CUDA_API(b->flags)),
                         pi_cuda_level_name(b->flags)),
          s, 0);
    /* a blocking copy is time the thread waited for the GPU, as record_dispatch.c counts it */
    int blocks = b->kind == PI_REC_GPU_COPY && !(b->flags & (PI_CUDA_ASYNC | PI_CUDA_NESTED));
    thread_time(p, ev, s, blocks ? PI_TIME_SYNC : PI_TIME_CLASS_COUNT);
    if (b->flags & (PI_CUDA_NESTED | PI_FLAG_FAILED))
        return; /* counted once, at the outer call */
    char name[1024];
    if (b->kind == PI_REC_GPU_LAUNCH) {
        if (PI_CUDA_SUBTYPE(b->flags) != PI_GPU_GRAPH)
            pi_python_sites_launch(a, ev->rec.tid, b->key[1], s->count);
        kernel_name(reader, b->key[1], b->flags, name, sizeof(name));
        merge(pi_latency_get(&a->calls, "kernel", name, "launch"), s, 0);
        pi_gpu_timeline_launches(p, ev->ts_ns, ev->ts_ns + ev->dur_ns, s->count);
        return;
    }
    unsigned direction = PI_CUDA_SUBTYPE(b->flags);
    int host_side = direction == PI_GPU_COPY_HTOD || direction == PI_GPU_COPY_DTOH;
    snprintf(name, sizeof(name), "%s %s",
             host_side ? ((b->flags & PI_CUDA_PINNED) ? "pinned" : "pageable") : "-",
             pi_copy_size_class(b->key[0]));
    merge(pi_latency_get(&a->calls, "copy", pi_gpu_copy_kind_name(direction), name), s, b->bytes);
}

/* Pieces a summary's GPU time is spread over: enough for steps of a few ms in a 10 s interval. */
#define GPU_PIECES 4096u

/*
 * A summary's GPU time for the GPU timeline and the steps: spread evenly
 * over its span, since when in it each kernel ran is not kept; a step's
 * GPU time is then its share of the interval's (the interval's average).
 */
static void spread_gpu_time(struct pi_process_info *p, const struct pi_event *ev,
                            const struct pi_summary *s)
{
    uint64_t pieces = s->count < GPU_PIECES ? s->count : GPU_PIECES;
    uint64_t span = ev->dur_ns ? ev->dur_ns : 1, total = s->body.total_ns;
    for (uint64_t i = 0; i < pieces; i++) {
        uint64_t at = ev->ts_ns + span * (2 * i + 1) / (2 * pieces);
        uint64_t part = total / pieces + (i < total % pieces);
        pi_gpu_timeline_work(p, at, part);
        pi_steps_gpu(&p->steps, at, part);
        pi_steps_gpu(&p->nvtx_steps, at, part);
        pi_relay_gpu(p, at, part, 0);
    }
}

/* GPU time: under the kernel or copy direction its call was counted under. */
static void gpu_time(struct pi_analysis *a, const struct pi_reader *reader,
                     struct pi_process_info *p, const struct pi_event *ev,
                     const struct pi_summary *s)
{
    const struct pi_summary_body *b = &s->body;
    char name[1024];
    struct pi_latency_entry *e;
    if (b->key[0] == PI_REC_GPU_COPY) {
        e = pi_latency_get(&a->calls, "gpu", pi_gpu_copy_kind_name(PI_CUDA_SUBTYPE(b->key[1])),
                           "copy");
    } else {
        kernel_name(reader, b->key[0] == PI_REC_GPU_LAUNCH ? b->key[1] : 0, 0, name,
                    sizeof(name));
        e = pi_latency_get(&a->calls, "gpu", name, "kernel");
    }
    merge(e, s, 0);
    a->gpu.gpu_busy_ns += b->total_ns;
    p->gpu_busy_ns += b->total_ns;
    spread_gpu_time(p, ev, s);
}

/* File I/O and other threads' waits: their tables, and their thread's time. */
static void host_call(struct pi_analysis *a, const struct pi_reader *reader,
                      struct pi_process_info *p, const struct pi_event *ev,
                      const struct pi_summary *s)
{
    const struct pi_summary_body *b = &s->body;
    unsigned time_class;
    if (b->kind == PI_REC_IO) {
        unsigned op = PI_IO_OP(b->flags), fd_class = PI_IO_CLASS(b->flags);
        op = op < PI_IO_OP_COUNT ? op : 0;
        fd_class = fd_class < PI_FD_CLASS_COUNT ? fd_class : PI_FD_UNKNOWN;
        merge(pi_latency_get(&a->calls, "io", pi_io_op_name(op), pi_fd_class_name(fd_class)), s,
              b->bytes);
        int opens = pi_io_opens(op);
        const char *path = b->key[2] && (fd_class == PI_FD_FILE || opens)
                               ? pi_reader_string(reader, b->key[2])
                               : NULL;
        struct pi_latency_entry *f = path ? pi_latency_get(&a->files, "file", path, "") : NULL;
        merge(f, s, b->bytes);
        if (f && !(b->flags & PI_FLAG_FAILED) && opens)
            f->opens += s->count;
        /* as for the records it stands for: a worker's reads of its next index are its
         * main thread's wait for data */
        time_class = pi_io_time_class(op, fd_class, (int)ev->rec.tid == p->header.pid,
                                      path != NULL);
    } else {
        unsigned kind = b->key[0] < PI_WAIT_KIND_COUNT ? (unsigned)b->key[0] : 0;
        merge(pi_latency_get(&a->calls, "wait", pi_wait_kind_name(kind), ""), s, 0);
        time_class = pi_wait_time_class(kind);
    }
    thread_time(p, ev, s, time_class);
}

static void detail(struct pi_process_info *p, const struct pi_event *ev)
{
    struct pi_summary_info *info = &p->summary;
    const struct pi_record *r = &ev->rec;
    if (r->arg[0] == PI_DETAIL_REPLAY_BEGIN || r->arg[0] == PI_DETAIL_REPLAY_END) {
        info->replaying = r->arg[0] == PI_DETAIL_REPLAY_BEGIN;
        return;
    }
    if (r->arg[0] != PI_DETAIL_WINDOW || info->window_count == PI_MAX_WINDOWS)
        return;
    struct pi_detail_window *w = &info->windows[info->window_count++];
    w->start_ns = ev->ts_ns;
    w->end_ns = ev->ts_ns + ev->dur_ns;
    w->reason = r->arg[1] <= PI_DETAIL_REQUESTED ? (unsigned)r->arg[1] : 0;
    w->step_ns = r->arg[2];
}

void pi_summary_event(struct pi_analysis *a, const struct pi_reader *reader,
                      struct pi_process_info *p, const struct pi_event *ev)
{
    if (ev->rec.kind == PI_REC_DETAIL) {
        detail(p, ev);
        return;
    }
    const struct pi_summary *s = pi_reader_summary(reader);
    if (!s)
        return;
    p->summary.summaries++;
    p->summary.summarised += s->count;
    switch (s->body.kind) {
    case PI_REC_GPU_LAUNCH:
    case PI_REC_GPU_COPY:
        cuda_call(a, reader, p, ev, s);
        break;
    case PI_REC_GPU_TIME:
        gpu_time(a, reader, p, ev, s);
        break;
    case PI_REC_SPAN: /* calls of a marked function by name and depth (summary_policy.h) */
        pi_spans_summary(p, ev->rec.tid, s, a->options.exact);
        break;
    case PI_REC_CALL_SITE: /* the Python frames of waits or sampled launches, by frames */
        pi_python_sites_add(a, p, ev->rec.tid, s->body.flags, s->body.key[0], s->body.key[1],
                            s->body.key[2], s->count, s->body.total_ns);
        break;
    default:
        host_call(a, reader, p, ev, s);
        break;
    }
}

int pi_summary_replayed(struct pi_process_info *p, const struct pi_event *ev)
{
    if (!p->summary.replaying || ev->rec.kind == PI_REC_DETAIL)
        return 0;
    p->summary.replayed++;
    return 1;
}
