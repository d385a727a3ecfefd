/*
 * record_dispatch.c - one record of a trace file handed to the parts that
 * follow it: latency tables, per-thread time, memory series, step
 * detection, GPU, call sites, collectives, spans. The per-record path of the
 * pass; what happens once a file is read is file_pass.c's.
 */
#include "record_dispatch.h"

#include "analysis/gpu/collectives.h"
#include "analysis/gpu/gemm.h"
#include "analysis/gpu/gpu_analysis.h"
#include "analysis/host/relay_steps.h"
#include "analysis/host/evaluation_loops.h"
#include "analysis/host/requests.h"
#include "analysis/host/span_steps.h"
#include "analysis/host/spans.h"
#include "analysis/host/steps.h"
#include "analysis/host/thread_cpu.h"
#include "analysis/host/thread_timeline.h"
#include "analysis/host/threads.h"
#include "analysis/host/working_span.h"
#include "analysis/pass/child_status.h"
#include "analysis/pass/summary_events.h"
#include "analysis/ranks/ranks.h"
#include "analysis/sites/call_sites.h"
#include "analysis/sites/python_sites.h"
#include "analysis/sites/python_lines.h"
#include "analysis/sites/native_time.h"
#include "analysis/sites/phases.h"
#include "analysis/sites/python_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BY_ID_RANGE, BY_ID_FILE, BY_ID_NVTX };

/* The entry of @group/name-of-string-@id, cached by id for this file. */
static struct pi_latency_entry *entry_by_string(struct pi_analysis *a, const struct pi_reader *reader,
                                                int which, uint64_t id, const char *group)
{
    if (id >= (1u << 24))
        return NULL;
    if (id >= a->by_string_capacity[which]) {
        size_t capacity = a->by_string_capacity[which] ? a->by_string_capacity[which] : 1024;
        while (capacity <= id)
            capacity *= 2;
        struct pi_latency_entry **grown =
            realloc(a->by_string_id[which], capacity * sizeof(*grown));
        if (!grown)
            return NULL;
        memset(grown + a->by_string_capacity[which], 0,
               (capacity - a->by_string_capacity[which]) * sizeof(*grown));
        a->by_string_id[which] = grown;
        a->by_string_capacity[which] = capacity;
    }
    struct pi_latency_entry **slot = &a->by_string_id[which][id];
    if (!*slot) {
        const char *name = pi_reader_string(reader, id);
        if (!name)
            return NULL; /* not defined (yet): do not cache */
        *slot = pi_latency_get(which == BY_ID_FILE ? &a->files : &a->calls, group, name, "");
    }
    return *slot;
}

/* I/O: latency tables, files, and which kind of time it was for its thread. */
static unsigned account_io(struct pi_analysis *a, const struct pi_reader *reader,
                           const struct pi_event *ev, int main_thread, uint64_t *received)
{
    const struct pi_record *r = &ev->rec;
    unsigned op = PI_IO_OP(r->flags), fd_class = PI_IO_CLASS(r->flags);
    int failed = (r->flags & PI_FLAG_FAILED) != 0;
    uint64_t bytes = !failed && pi_io_moves_bytes(op) ? r->arg[1] : 0;
    /* fields come from the file: out-of-range values must not index tables */
    if (op >= PI_IO_OP_COUNT)
        op = 0;
    if (fd_class >= PI_FD_CLASS_COUNT)
        fd_class = PI_FD_UNKNOWN;
    struct pi_latency_entry *e, **cached = &a->io_entries[op][fd_class];
    if (failed && pi_io_opens(op)) {
        /* a failed open has no descriptor to classify: named by its error (arg1 = -errno) */
        char number[16], detail[32];
        snprintf(detail, sizeof(detail), "failed %s", pi_errno_name(-(int64_t)r->arg[1], number));
        e = pi_latency_get(&a->calls, "io", pi_io_op_name(op), detail);
    } else {
        if (!*cached)
            *cached = pi_latency_get(&a->calls, "io", pi_io_op_name(op), pi_fd_class_name(fd_class));
        e = *cached;
    }
    if (e) {
        pi_histogram_add(&e->durations, ev->dur_ns);
        e->bytes += bytes;
    }
    int has_path = r->arg[2] != 0;
    if (has_path && (fd_class == PI_FD_FILE || pi_io_opens(op))) {
        struct pi_latency_entry *f = entry_by_string(a, reader, BY_ID_FILE, r->arg[2], "file");
        if (f) {
            pi_histogram_add(&f->durations, ev->dur_ns);
            f->bytes += bytes;
            f->opens += !failed && pi_io_opens(op);
        }
    }
    if (main_thread && !failed && pi_io_is_pipe_receipt(op, fd_class))
        *received = r->arg[1];
    return pi_io_time_class(op, fd_class, main_thread, has_path);
}

/* @t was seen from @from to @to. */
static void seen(struct pi_thread_info *t, uint64_t from, uint64_t to)
{
    if (from < t->first_ns)
        t->first_ns = from;
    if (to > t->last_ns)
        t->last_ns = to;
}

/* A capture window opened or closed. A close without an open: recording ran from the start. */
static void capture_window(struct pi_process_info *p, uint64_t at, int opened)
{
    if (opened && !p->window_open) {
        if (p->window_count == PI_MAX_WINDOWS)
            p->window_count--; /* the last one stretches to take in the rest */
        else
            p->windows[p->window_count].start_ns = at;
        p->window_open = 1;
        p->window_count++;
    } else if (!opened && p->window_open) {
        p->windows[p->window_count - 1].end_ns = at;
        p->window_open = 0;
    } else if (!opened && p->window_count == 0) {
        p->windows[p->window_count++] = (struct pi_window){p->header.start_monotonic_ns, at};
    }
}

/* A reading of the memory cgroup's OOM kills: a rise after the first is a kill in the cgroup. */
static void oom_kills(struct pi_oom_kills *o, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    if (o->readings++ == 0)
        o->first = r->arg[0];
    else if (r->arg[0] > o->last && o->rise_count < sizeof(o->rises) / sizeof(o->rises[0]))
        o->rises[o->rise_count++] = (struct pi_oom_rise){ev->ts_ns, r->arg[0], r->arg[1], r->arg[2]};
    o->last = r->arg[0];
}

/* More threads blocked at once than a process of a training job has; past it, the first. */
#define BLOCKED_MAX 4096

/* A thread blocked when a fatal signal ended the process, with its Python frames then. */
static void blocked_thread(struct pi_process_info *p, const struct pi_reader *reader,
                           const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    if (p->blocked_count >= BLOCKED_MAX)
        return;
    if ((p->blocked_count & (p->blocked_count - 1)) == 0) { /* 0, 1, 2, 4...: grow */
        size_t room = p->blocked_count ? p->blocked_count * 2 : 4;
        struct pi_blocked_thread *more = realloc(p->blocked, room * sizeof(*more));
        if (!more)
            return;
        p->blocked = more;
    }
    p->blocked[p->blocked_count++] = (struct pi_blocked_thread){
        .tid = PI_IN_FLIGHT_TID(r->arg[0]),
        .what = PI_IN_FLIGHT_WHAT(r->arg[0]),
        .object = r->arg[1],
        .since_ns = ev->ts_ns,
        .for_ns = ev->dur_ns,
        .site = r->arg[2] ? pi_call_site_read(reader, r->arg[2]) : NULL,
    };
}

/* A device the process used, kept once per ordinal. */
static void device_described(struct pi_process_info *p, const struct pi_reader *reader,
                             const struct pi_record *r)
{
    unsigned ordinal = PI_DEVICE_ORDINAL(r->arg[0]);
    for (size_t i = 0; i < p->device_count; i++)
        if (p->devices[i].ordinal == ordinal)
            return;
    if (p->device_count == PI_MAX_DEVICES)
        return;
    struct pi_device_info *d = &p->devices[p->device_count++];
    const char *name = r->arg[2] ? pi_reader_string(reader, r->arg[2]) : NULL;
    *d = (struct pi_device_info){.ordinal = ordinal, .major = PI_DEVICE_MAJOR(r->arg[0]),
                                 .minor = PI_DEVICE_MINOR(r->arg[0]),
                                 .sms = PI_DEVICE_SMS(r->arg[1]),
                                 .clock_khz = PI_DEVICE_CLOCK_KHZ(r->arg[1])};
    snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
}

void pi_record_dispatch(struct pi_analysis *a, const struct pi_reader *reader,
                        struct pi_process_info *p, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    pi_collectives_event(p, reader, ev);
    pi_gemm_event(p, reader, ev);
    if (r->kind == PI_REC_EXEC && !(r->flags & PI_FLAG_FAILED))
        p->replaced_by_exec = 1; /* and on: the exec is also its thread's event */
    switch (r->kind) {
    case PI_REC_PROC_SAMPLE:
        pi_series_add(&p->rss, ev->ts_ns, r->arg[0]);
        if (r->arg[0] > p->rss_peak) {
            p->rss_peak = r->arg[0];
            p->rss_peak_ns = ev->ts_ns;
        }
        p->cpu_user_ns = r->arg[1];
        p->cpu_sys_ns = r->arg[2];
        p->rss_last = r->arg[0];
        return;
    case PI_REC_MEMORY_CGROUP:
        oom_kills(&p->oom, ev);
        return;
    case PI_REC_FATAL_SIGNAL: {
        struct pi_fatal_signal *s = r->flags & PI_SIGNAL_HANDLED ? &p->stop : &p->fatal;
        if (s == &p->stop && s->seen)
            return; /* the first says who stopped the job */
        s->seen = 1;
        s->tid = r->tid;
        s->signo = (uint32_t)r->arg[0];
        s->code = (int32_t)(uint32_t)(r->arg[0] >> 32);
        s->flags = r->flags;
        s->detail = r->arg[1];
        s->ns = ev->ts_ns;
        return;
    }
    case PI_REC_STDERR_TAIL: {
        const char *tail = pi_reader_string(reader, r->arg[0]);
        free(p->stderr_tail);
        p->stderr_tail = tail ? strdup(tail) : NULL;
        p->stderr_bytes = r->arg[1];
        return;
    }
    case PI_REC_PROC_PSS:
        pi_series_add(&p->pss, ev->ts_ns, r->arg[0]);
        if (r->arg[0] > p->pss_peak) {
            p->pss_peak = r->arg[0];
            p->pss_peak_ns = ev->ts_ns;
        }
        return;
    case PI_REC_LOST:
        /* strings not kept are no records lost: the records are there, unnamed */
        if (r->arg[1] == PI_LOST_STRINGS)
            p->strings_lost += r->arg[0];
        else
            p->lost += r->arg[0];
        return;
    case PI_REC_PROCESS_END:
        p->ended = 1;
        p->end_status = (int64_t)r->arg[0];
        p->end_reason = r->arg[1];
        p->profiler_cpu_ns = r->arg[2];
        return;
    case PI_REC_FORK:
        p->children++;
        return;
    case PI_REC_CHILD_STATUS:
        pi_child_status_add(p, (uint32_t)r->arg[0], (uint32_t)r->arg[1], ev->ts_ns);
        return;
    case PI_REC_THREAD_NAME:
        /* arg1 names another thread by pthread_t (not known to the reader); arg2 by tid */
        if (r->arg[1] == 0)
            pi_thread_name(p, r->arg[2] ? (uint32_t)r->arg[2] : r->tid,
                        pi_reader_string(reader, r->arg[0]));
        return;
    case PI_REC_CAPTURE:
        capture_window(p, ev->ts_ns, r->arg[0] != 0);
        return;
    case PI_REC_CLOCK_SYNC:
        pi_ranks_clock_sync(p, ev);
        return;
    case PI_REC_STRING:
    case PI_REC_MODULE:
    case PI_REC_STACK:
        return;
    case PI_REC_CALL_SITE: /* Python frames of an earlier record of the thread */
    case PI_REC_PYTHON:
        p->python |= r->kind == PI_REC_PYTHON;
        pi_python_sites_event(a, reader, p, ev);
        if (r->kind == PI_REC_CALL_SITE && PI_CALL_SITE_KIND(r->arg[1]) == PI_REC_GPU_ALLOC)
            pi_gpu_call_site(p, reader, ev);
        if (r->kind == PI_REC_CALL_SITE && PI_CALL_SITE_KIND(r->arg[1]) == PI_REC_FATAL_SIGNAL &&
            p->fatal.seen && !p->fatal.site && r->tid == p->fatal.tid)
            p->fatal.site = pi_call_site_read(reader, r->arg[0] & 0xffffffu);
        return;
    case PI_REC_NATIVE_SAMPLE:
        pi_native_time_event(p, ev);
        return;
    case PI_REC_SIGNAL_SENDER:
        if (p->sender_count < (int)(sizeof(p->senders) / sizeof(p->senders[0]))) {
            const char *command = pi_reader_string(reader, r->arg[1]);
            p->senders[p->sender_count++] =
                (struct pi_signal_sender){(uint32_t)r->arg[0], command ? strdup(command) : NULL};
        }
        return;
    case PI_REC_WAIT_IN_FLIGHT:
        blocked_thread(p, reader, ev);
        return;
    case PI_REC_DEVICE:
        device_described(p, reader, r);
        return;
    case PI_REC_PY_SAMPLE:
        p->python = 1;
        pi_python_time_event(a, p, ev);
        pi_phases_event(p, ev);
        pi_python_lines_event(p, ev);
        return;
    case PI_REC_WAKE: /* in a process with data-loader workers */
        if (p->children == 0)
            return;
        if ((int)r->tid == p->header.pid) /* where a step of the main thread starts */
            pi_steps_wake(&p->steps, ev->ts_ns);
        else
            pi_relay_wake(p, ev, a->options.exact);
        return;
    case PI_REC_GPU_TIME: {
        /* a step's GPU time is the GPU work it launched, wherever that ran:
         * by its launch's host time, not the GPU start (which may come after
         * the step, or on another clock's mapping a hair before it) */
        int collective;
        uint64_t launched = pi_gpu_time_event(a, reader, p, ev, &collective);
        pi_collectives_gpu_time(p, ev, launched);
        pi_gemm_gpu_time(p, ev, launched);
        uint64_t at = launched ? launched : ev->ts_ns;
        pi_steps_gpu(&p->steps, at, ev->dur_ns);
        pi_steps_gpu(&p->nvtx_steps, at, ev->dur_ns);
        if (collective) { /* NCCL's kernels wait on the GPU for the other ranks */
            pi_steps_collective_gpu(&p->steps, at, ev->dur_ns);
            pi_steps_collective_gpu(&p->nvtx_steps, at, ev->dur_ns);
        }
        pi_relay_gpu(p, at, ev->dur_ns, collective);
        pi_span_steps_gpu(p, at, ev->dur_ns, collective);
        return;
    }
    case PI_REC_GPU_TIMING:
    case PI_REC_GPU_POOL:
    case PI_REC_DEVICE_MEMORY:
        pi_gpu_event(a, reader, p, ev);
        return;
    case PI_REC_THREAD_CPU: { /* the subject is arg2, not the thread that read the clocks */
        if (r->arg[1] == PI_THREAD_CPU_SAMPLE) {
            if ((int)(uint32_t)r->arg[2] != p->header.pid)
                return;
            pi_clock_samples_add(&p->main_cpu, ev->ts_ns, r->arg[0]);
            if (r->flags & PI_FLAG_RUN_DELAY) {
                struct pi_run_delay_sample at = {ev->ts_ns, (r->arg[2] >> 32) * 1000000u};
                if (!p->run_delay_samples++)
                    p->run_delay_first = at;
                p->run_delay_last = at;
            }
            return;
        }
        struct pi_thread_info *subject = pi_thread_of(p, (uint32_t)r->arg[2]);
        p->thread_cpu_edges = 1;
        if (!subject)
            return;
        pi_thread_cpu_edge(&subject->cpu, r->arg[0], r->arg[1] == PI_THREAD_CPU_OPENING);
        seen(subject, ev->ts_ns, ev->ts_ns); /* whether or not it made a recorded call */
        return;
    }
    case PI_REC_SUMMARY:
    case PI_REC_DETAIL:
        pi_summary_event(a, reader, p, ev);
        return;
    case PI_REC_SPAN_NOTE: /* what the framework said of a call */
        pi_spans_note(p, ev);
        return;
    case PI_REC_SPAN_HOST_MEMORY: /* the resident memory the next span record's call changed */
        pi_spans_host_memory(p, ev, a->options.exact);
        return;
    case PI_REC_SPAN: /* and on: a call its thread made */
        p->python = 1; /* a marked Python function ran */
        pi_spans_event(p, ev, a->options.exact);
        pi_span_steps_event(p, ev, a->options.exact, a->options.warmup_steps);
        pi_requests_span(p, ev, a->options.exact);
        pi_evaluation_loops_span(p, ev);
        pi_phases_compile_call(p, ev);
        break;
    default:
        break;
    }
    if (r->tid == 0)
        return;
    struct pi_thread_info *t = pi_thread_of(p, r->tid);
    if (!t)
        return;
    /* the main thread of a process that started others: its pipe and
     * socket waits are waits for those (data-loader workers) */
    int main_thread = (int)r->tid == p->header.pid && p->children > 0;
    t->events++;
    /* an end seen between windows (a trace before format 7) says nothing of them */
    if (r->kind == PI_REC_THREAD_EXIT && r->arg[1] == PI_THREAD_CPU_MEASURED &&
        (p->window_open || p->window_count == 0))
        pi_thread_cpu_end(&t->cpu, r->arg[0]);
    seen(t, ev->ts_ns, ev->ts_ns + ev->dur_ns);
    unsigned time_class = PI_TIME_CLASS_COUNT;
    uint64_t received = 0; /* bytes the main thread read from a pipe */
    if (r->kind == PI_REC_IO) {
        time_class = account_io(a, reader, ev, main_thread, &received);
        if ((int)r->tid != p->header.pid && p->children > 0)
            pi_relay_io(p, ev, a->options.exact);
    } else if (r->kind == PI_REC_WAIT) {
        unsigned kind = r->arg[0] < PI_WAIT_KIND_COUNT ? (unsigned)r->arg[0] : 0;
        if (!a->wait_entries[kind])
            a->wait_entries[kind] = pi_latency_get(&a->calls, "wait", pi_wait_kind_name(kind), "");
        if (a->wait_entries[kind])
            pi_histogram_add(&a->wait_entries[kind]->durations, ev->dur_ns);
        time_class = pi_wait_time_class(kind);
    } else if (r->kind >= PI_REC_GPU_ALLOC && r->kind <= PI_REC_GPU_SYNC) {
        pi_gpu_event(a, reader, p, ev);
        if (pi_gpu_host_waits(r))
            time_class = PI_TIME_SYNC;
    } else if (r->kind == PI_REC_NVTX_RANGE) {
        struct pi_latency_entry *e = entry_by_string(a, reader, BY_ID_NVTX, r->arg[0], "nvtx");
        if (e)
            pi_histogram_add(&e->durations, ev->dur_ns);
        if ((int)r->tid == p->header.pid && r->arg[1] == 0) {
            /* a top-level range of the main thread: one step; a damaged one's end stops at
             * the clock's end, not past 2^64 before its start */
            uint64_t end = ev->dur_ns <= UINT64_MAX - ev->ts_ns ? ev->ts_ns + ev->dur_ns
                                                                : UINT64_MAX;
            pi_steps_record(&p->nvtx_steps, ev->ts_ns, end, p->nvtx_wait_ns, p->nvtx_sync_ns);
            p->nvtx_wait_ns = p->nvtx_sync_ns = 0;
        }
    } else if (r->kind == PI_REC_RANGE) {
        struct pi_latency_entry *e =
            r->arg[1] ? entry_by_string(a, reader, BY_ID_RANGE, r->arg[1], "range")
                      : pi_latency_get(&a->calls, "range", "?", "");
        if (e)
            pi_histogram_add(&e->durations, ev->dur_ns);
    }
    if (time_class < PI_TIME_CLASS_COUNT) {
        t->time[time_class] += ev->dur_ns;
        pi_thread_timeline_add(t, p->header.start_monotonic_ns, ev->ts_ns, ev->dur_ns, time_class);
    }
    if ((int)r->tid == p->header.pid && r->kind == PI_REC_IO && time_class < PI_TIME_CPU &&
        pi_io_is_data_wait(PI_IO_OP(r->flags), PI_IO_CLASS(r->flags)))
        pi_working_span_wait(p, t, r, ev->ts_ns, ev->dur_ns, time_class);
    if (main_thread && time_class < PI_TIME_CLASS_COUNT)
        pi_steps_event(&p->steps, ev, time_class, received);
    if (time_class < PI_TIME_CPU) /* the waits inside requests */
        pi_requests_wait(p, r->tid, ev->ts_ns, ev->dur_ns, time_class, a->options.exact);
    if (p->span_steps && (time_class == PI_TIME_SYNC || time_class == PI_TIME_LOCK_WAIT))
        pi_span_steps_wait(p, r->tid, ev->ts_ns, ev->dur_ns, time_class);
    if ((int)r->tid == p->header.pid && time_class == PI_TIME_LOCK_WAIT) {
        pi_steps_lock(&p->steps, ev->ts_ns, ev->dur_ns);
        pi_steps_lock(&p->nvtx_steps, ev->ts_ns, ev->dur_ns);
    }
    if ((int)r->tid == p->header.pid)
        pi_relay_main_event(p, ev, time_class, a->options.exact);
    if ((int)r->tid == p->header.pid) {
        p->nvtx_wait_ns += time_class == PI_TIME_DATA_WAIT ? ev->dur_ns : 0;
        p->nvtx_sync_ns += time_class == PI_TIME_SYNC ? ev->dur_ns : 0;
    }
}
