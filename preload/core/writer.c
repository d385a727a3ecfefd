/*
 * writer.c - the writer thread: drains thread buffers, adds process
 * samples, and hands each batch to frame_output.c, which compresses it into
 * its own zstd frame and appends it to the trace file. It owns all of the
 * profiler's I/O, blocks every signal, and never calls a hooked function
 * (raw syscalls only).
 */
#include "recorder_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "background_thread.h"
#include "process_events.h"
#include "process_sample.h"
#include "diagnostics.h"
#include "frame_output.h"
#include "pool_sizing.h"
#include "raw_syscalls.h"
#include "signal_notes.h"
#include "live_figures.h"
#include "summary_mode.h"
#include "trace_file.h"

/* The first estimate of the tick rate (PI_FIRST_RATE_MIN_NS) is refined by
 * the reader from the sync points written at every flush, and by the
 * writer itself, once, when REFINE_NS have passed. */
#define REFINE_NS 50000000u
#define SETTLE_NS 100000000u
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

static struct pi_record *summary_stage(void *writer, uint32_t slots)
{
    return pi_writer_stage(writer, slots);
}

static struct pi_record *stage_process_record(struct pi_writer *w, uint16_t kind, uint64_t ts,
                                              uint64_t a0, uint64_t a1, uint64_t a2)
{
    struct pi_record *r = pi_writer_stage(w, 1);
    w->staged_own++; /* after stage(), which may have written a frame */
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->ts = ts;
    r->arg[0] = a0;
    r->arg[1] = a1;
    r->arg[2] = a2;
    return r;
}

/* Summary mode: a quiet path that a record about to be staged names */
static void summary_define(void *writer, uint32_t id)
{
    if (pi_strings_define(&pi_rec.strings, id))
        pi_writer_stage_definition(writer, id);
}

static void set_tick_rate(double ticks_per_second)
{
    __atomic_store(&pi_rec.ticks_per_second, &ticks_per_second, __ATOMIC_RELAXED);
    pi_wait_threshold_ticks =
        (uint64_t)((double)pi_rec.config.wait_threshold_ns * ticks_per_second / 1e9);
}

static void stage_clock_sync(struct pi_writer *w)
{
    uint64_t ticks, mono;
    pi_clock_sync_point(&ticks, &mono);
    if (!w->rate_refined && mono - pi_rec.start_monotonic_ns >= REFINE_NS) {
        w->rate_refined = 1;
        if (pi_clock_uses_tsc)
            set_tick_rate(pi_clock_rate_between(pi_rec.start_ticks, pi_rec.start_monotonic_ns,
                                                ticks, mono));
    }
    uint64_t real = pi_clock_ns(CLOCK_REALTIME), after = pi_clock_ticks();
    /* after this flush's strings: a fork child's reader stops reading this file there */
    stage_process_record(w, PI_REC_CLOCK_SYNC, ticks, mono, real, pi_rec.strings.emit_from)->dur =
        after - ticks;
}

/* A stop signal the application's own handler took, as its thread's record. */
static void stage_stop_signal(struct pi_writer *w)
{
    struct pi_stop_signal stop;
    if (!pi_stop_signal_take(&stop))
        return;
    struct pi_record *r =
        stage_process_record(w, PI_REC_FATAL_SIGNAL, stop.ts, stop.signal_and_code, stop.from, 0);
    r->tid = stop.tid;
    r->flags = (uint16_t)stop.flags;
}

/* The processes that sent stop signals (named before the buffers were drained, so their
 * command lines' strings are defined in the frame ahead of these records). */
static void stage_signal_senders(struct pi_writer *w, const struct pi_signal_senders *s)
{
    for (int i = 0; i < s->count; i++)
        stage_process_record(w, PI_REC_SIGNAL_SENDER, pi_clock_ticks(), s->pids[i],
                             s->commands[i], s->signals[i]);
}

/* Stage one process sample, and the process's PSS when it is due (not as it
 * ends or execs: a fork child's read costs what its parent's does, 40 ms for
 * 2 GiB); return the process's CPU time (user + system) in ns. */
static uint64_t stage_sample(struct pi_writer *w, int stopping)
{
    struct pi_process_sample sample;
    pi_process_sample_read(&w->sampler, &sample);
    uint64_t now = pi_clock_ticks();
    stage_process_record(w, PI_REC_PROC_SAMPLE, now, sample.rss_bytes, sample.user_ns,
                         sample.system_ns);
    /* the main thread's clock beside it: what of the training loop's steps was computing, and
     * how long it waited for a CPU (in the subject's upper half) */
    int64_t run_delay = pi_run_delay_read(w->schedstat_fd);
    uint64_t subject = (uint64_t)(uint32_t)pi_rec.pid;
    if (run_delay >= 0)
        subject |= (uint64_t)run_delay / 1000000u << 32;
    struct pi_record *clock =
        stage_process_record(w, PI_REC_THREAD_CPU, now, pi_thread_cpu_in_trace((uint32_t)pi_rec.pid),
                             PI_THREAD_CPU_SAMPLE, subject);
    if (run_delay >= 0)
        clock->flags |= PI_FLAG_RUN_DELAY;
    struct pi_pss_sample pss;
    if (!stopping && pi_pss_sample_read(&w->sampler, pi_clock_ns(CLOCK_MONOTONIC), &pss))
        stage_process_record(w, PI_REC_PROC_PSS, pi_clock_ticks(), pss.pss_bytes, pss.rss_bytes,
                             pss.read_ns);
    struct pi_memory_cgroup_reading cgroup;
    if (pi_memory_cgroup_read(&w->memory_cgroup, &cgroup))
        stage_process_record(w, PI_REC_MEMORY_CGROUP, pi_clock_ticks(), cgroup.oom_kills,
                             cgroup.limit_bytes, cgroup.usage_bytes);
    return sample.user_ns + sample.system_ns;
}

/*
 * The gap to the next sample. Each wake costs the writer tens of
 * microseconds on a virtual machine, which an idle process (a DataLoader
 * worker waiting for work) would spend on samples that never change: while
 * the process used under 2% of a CPU since the last sample (the profiler's
 * own threads included: reading their clocks would cost more system calls
 * than it saves, and at idle they use far less), the gap doubles, up to the
 * flush interval; any activity restores the configured interval.
 */
static uint64_t next_sample_gap(struct pi_writer *w, uint64_t process_cpu_ns)
{
    uint64_t configured = pi_rec.config.sample_interval_ns;
    uint64_t used = process_cpu_ns - (process_cpu_ns > w->process_cpu_ns ? w->process_cpu_ns
                                                                         : process_cpu_ns);
    uint64_t gap = w->sample_gap_ns ? w->sample_gap_ns : configured;
    uint64_t longest = pi_rec.config.flush_interval_ns > configured
                           ? pi_rec.config.flush_interval_ns
                           : configured;
    gap = used * 50 < gap ? (gap * 2 < longest ? gap * 2 : longest) : configured;
    w->process_cpu_ns = process_cpu_ns;
    w->sample_gap_ns = gap;
    return gap;
}

static void stage_lost(struct pi_writer *w, uint32_t tid, uint64_t count, unsigned reason)
{
    struct pi_record *r = pi_writer_stage(w, 1);
    memset(r, 0, sizeof(*r));
    r->kind = PI_REC_LOST;
    r->tid = tid;
    r->ts = pi_clock_ticks();
    r->arg[0] = count;
    r->arg[1] = reason;
    if (reason == PI_LOST_NO_BUFFER)
        atomic_fetch_add(&pi_rec.stat_lost, count);
}

/* Turn the drop counters of threads (live or ended) into LOST records. */
static void stage_lost_counts(struct pi_writer *w)
{
    uint32_t end = atomic_load(&pi_rec.thread_slots_used), live = 0;
    uint64_t dropped = 0;
    for (uint32_t i = 0; i < end && i < PI_THREAD_SLOTS; i++) {
        struct pi_thread_slot *slot = &pi_rec.thread_slots[i];
        /* read the state first: an ENDED thread adds nothing after it */
        uint32_t state = atomic_load(&slot->state);
        live += i > 0 && state == PI_SLOT_IN_USE; /* slot 0 is anyone's */
        if (atomic_load_explicit(&slot->lost, memory_order_relaxed) != 0) {
            uint64_t count = atomic_exchange(&slot->lost, 0);
            if (count)
                stage_lost(w, i ? atomic_load(&slot->tid) : 0, count, PI_LOST_NO_BUFFER);
            dropped += count;
        }
        if (state == PI_SLOT_ENDED && !atomic_load(&slot->unsaid_exit_cpu_ns))
            atomic_store(&slot->state, PI_SLOT_FREE);
    }
    w->pool_threads = MAX(w->pool_active, live); /* those with a buffer, and those without */
    if (dropped && !w->failed) /* else tracing stopped, and that was said */
        pi_pool_tell_drops(dropped, w->pool_threads, w->pool_retired);
    /* names, paths and stacks the string table had no room for: their records say 0 */
    if (atomic_load_explicit(&pi_rec.strings.refused, memory_order_relaxed) != 0) {
        uint64_t refused = atomic_exchange(&pi_rec.strings.refused, 0);
        if (refused)
            stage_lost(w, 0, refused, PI_LOST_STRINGS);
    }
}

/* The threads still running as the process ends end with it: each one's CPU
 * time, as a thread that exits records its own (pi_thread_exit). One system
 * call a thread, once. A thread that ended after recording stopped left its
 * figure in its slot. */
static void stage_running_threads(struct pi_writer *w)
{
    uint32_t end = atomic_load(&pi_rec.thread_slots_used);
    uint64_t now = pi_clock_ticks();
    for (uint32_t i = 1; i < end && i < PI_THREAD_SLOTS; i++) { /* slot 0: anyone's */
        struct pi_thread_slot *slot = &pi_rec.thread_slots[i];
        uint32_t state = atomic_load(&slot->state);
        uint64_t unsaid = state == PI_SLOT_ENDED ? atomic_exchange(&slot->unsaid_exit_cpu_ns, 0) : 0;
        if (state != PI_SLOT_IN_USE && !unsaid)
            continue;
        uint32_t tid = atomic_load(&slot->tid);
        stage_process_record(w, PI_REC_THREAD_EXIT, now,
                             unsaid ? unsaid : pi_thread_cpu_in_trace(tid), PI_THREAD_CPU_MEASURED,
                             0)
            ->tid = tid;
    }
}

/* Copy records [flushed, end) of @b into staging, writing frames as it fills. */
static void copy_buffer(struct pi_writer *w, struct pi_buffer *b, uint32_t end)
{
    while (b->flushed < end) {
        uint32_t room = w->staging_capacity - w->staged;
        if (room == 0) {
            pi_writer_flush_staging(w);
            continue;
        }
        uint32_t count = end - b->flushed < room ? end - b->flushed : room;
        const struct pi_record *src = &b->records[b->flushed];
        pi_live_take(src, count, (uint32_t)pi_rec.pid, !pi_rec.fork_child);
        if (pi_rec.config.summary) {
            pi_summary_mode_take(src, count); /* stages only what it writes in full */
        } else {
            memcpy(&w->staging[w->staged], src, (size_t)count * sizeof(*src));
            w->staged += count;
        }
        b->flushed += count;
    }
}

/*
 * One pass over the pool. Buffers that threads retired are copied and
 * freed; with @partial, the committed part of active buffers too (the
 * periodic flush). Commit counts are read before strings are staged, so
 * every string a copied record refers to is staged ahead of it.
 */
static void drain_buffers(struct pi_writer *w, int partial)
{
    struct pi_buffer_pool *pool = &pi_rec.pool;
    uint32_t pending = 0, count = pi_pool_count(pool);
    w->pool_active = w->pool_retired = 0;
    for (uint32_t i = 0; i < count; i++) {
        struct pi_buffer *b = pi_pool_buffer(pool, i);
        uint32_t state = atomic_load_explicit(&b->state, memory_order_acquire);
        w->snapshot_state[i] = state;
        w->pool_active += state == PI_BUF_ACTIVE;
        w->pool_retired += state == PI_BUF_RETIRED;
        if (state == PI_BUF_FREE || (state == PI_BUF_ACTIVE && !partial))
            continue;
        /* acquire: the owner's records and its buffer's sequence are visible */
        w->snapshot_committed[i] = atomic_load_explicit(&b->committed, memory_order_acquire);
        if (w->snapshot_committed[i] > b->flushed || state == PI_BUF_RETIRED)
            w->drain_order[pending++] = i;
    }
    pi_writer_stage_new_definitions(w);
    stage_lost_counts(w);
    pi_pool_sort_by_sequence(pool, w->drain_order, w->drain_keys, pending);
    for (uint32_t k = 0; k < pending; k++) {
        uint32_t i = w->drain_order[k];
        struct pi_buffer *b = pi_pool_buffer(pool, i);
        copy_buffer(w, b, w->snapshot_committed[i]);
        if (w->snapshot_state[i] == PI_BUF_RETIRED)
            pi_pool_release(pool, b);
    }
}

/*
 * Create the file and write the header frame, before the first frame of
 * records: at the first flush (at most 100 ms in), or as the process ends
 * if it recorded anything. A process that ends sooner having recorded
 * nothing (a /bin/true of a shell script) costs no file, no reads of /proc
 * for its header and no compression. 0, or -1 with the reason said and
 * recording stopped.
 */
static int open_trace_file(struct pi_writer *w)
{
    struct pi_header_clock clock;
    clock.clock_source = pi_clock_source();
    clock.ticks_per_second = pi_rec.ticks_per_second;
    clock.start_ticks = pi_rec.start_ticks;
    clock.start_monotonic_ns = pi_rec.start_monotonic_ns;
    clock.start_realtime_ns = pi_rec.start_realtime_ns;
    clock.flush_interval_ns = pi_rec.config.flush_interval_ns;
    clock.sample_interval_ns = pi_rec.config.sample_interval_ns;

    clock.host_pid = pi_rec.config.host_pid_of == (int)getpid() ? pi_rec.config.host_pid : 0;
    clock.inherited_below = pi_rec.inherited_below;
    clock.parent_file = pi_rec.parent_file;
    w->fd = pi_trace_file_create(&pi_rec.config, clock.start_realtime_ns,
                                 pi_rec.trace_path, sizeof(pi_rec.trace_path));
    if (w->fd < 0) { /* the reason was said */
        pi_rec.trace_path[0] = '\0';
        w->failed = 1;
    } else {
        size_t header_size = pi_trace_header_build(w->encoded, HEADER_CAPACITY, &clock);
        pi_writer_write_frame(w, w->encoded, header_size, 0);
    }
    if (w->failed) {
        atomic_store(&pi_recording, 0);
        atomic_store(&pi_rec.state, PI_STATE_STOPPED);
        return -1;
    }
    return 0;
}

/*
 * A periodic flush that found only samples and clock syncs to write, in a
 * process idle enough that its samples were spaced out (next_sample_gap),
 * leaves them staged for up to IDLE_FRAME_NS: an idle process then costs
 * one frame (compression and a write) a second instead of ten. A busy one
 * writes its samples at every flush even when it records nothing else: a
 * process growing towards the OOM killer's SIGKILL keeps its last RSS
 * samples.
 */
#define IDLE_FRAME_NS 1000000000u

/* Runs until stopped; owns every file descriptor it opens. */
static void writer_loop(struct pi_writer *w)
{
    uint64_t now = pi_clock_ns(CLOCK_MONOTONIC);
    /* the first flush settles the process (PI_EVENT_SETTLED): at most SETTLE_NS in */
    w->next_flush_ns = now + MIN(pi_rec.config.flush_interval_ns, SETTLE_NS);
    w->next_sample_ns = now;
    w->last_frame_ns = now;
    for (;;) {
        atomic_fetch_add_explicit(&pi_rec.stat_wakes, 1, memory_order_relaxed);
        /* nonzero when a thread asked for us (a buffer filled), not a timeout */
        int woken = atomic_exchange(&pi_rec.writer_wake, 0) != 0;
        int stopping = atomic_load(&pi_rec.stop_requested) != 0;
        uint32_t requested = atomic_load(&pi_rec.flush_requested);
        int flush_asked = requested != atomic_load(&pi_rec.flush_done);
        now = pi_clock_ns(CLOCK_MONOTONIC);
        /* Samples and flushes fall due at different times; whichever is due
         * within half a sample gap is done on this wake, so that a process
         * is woken once per sample, not once per sample and once per flush. */
        uint64_t sample_ns = pi_rec.config.sample_interval_ns;
        uint64_t slack = (w->sample_gap_ns ? w->sample_gap_ns : sample_ns) / 2;
        /* stopping: the last sample below says it all, one read of each source */
        if (sample_ns && !stopping && now + slack >= w->next_sample_ns && !w->failed) {
            uint64_t gap = next_sample_gap(w, stage_sample(w, 0));
            w->next_sample_ns += gap;
            if (w->next_sample_ns <= now)
                w->next_sample_ns = now + gap;
        }
        /* the first flush settles the process, never early: with samples 200 ms apart the
         * slack made it the first wake, before the library had subscribed to it (the
         * control socket was never made) */
        uint64_t early = w->settled ? slack : 0;
        int partial = stopping || now + early >= w->next_flush_ns || flush_asked;
        struct pi_signal_senders senders = {.count = 0};
        if (partial)
            pi_signal_senders_name(&senders);
        /* the process ends inside the recording (not in a pause between windows) */
        int ends_recorded = stopping && atomic_exchange(&pi_recording, 0) != 0;
        if (ends_recorded && pi_rec.config.test_stop_stall_ns) /* the tests' build: 0 else */
            pi_sys_sleep(pi_rec.config.test_stop_stall_ns);
        /* a wake for a sample alone need not look at the buffers */
        if (partial || woken) {
            drain_buffers(w, partial);
            pi_pool_fit_threads(w->pool_threads);
        }
        if (partial && pi_rec.config.summary)
            pi_summary_mode_flush(stopping);
        if (w->failed)
            w->staged = w->staged_own = 0;
        if (partial) {
            /* the first periodic flush writes, idle or not: a process alive then has
             * its file (and its path in the control socket's answers) from then on */
            int idle = !stopping && !flush_asked && w->fd >= 0 && w->staged == w->staged_own &&
                       w->sample_gap_ns > sample_ns && now - w->last_frame_ns < IDLE_FRAME_NS;
            if (stopping && sample_ns) /* the last word on RSS and CPU, however idle */
                stage_sample(w, 1);
            stage_stop_signal(w);
            stage_signal_senders(w, &senders);
            if (ends_recorded)
                stage_running_threads(w);
            if (stopping)
                stage_process_record(w, PI_REC_PROCESS_END, pi_clock_ticks(),
                                     (uint64_t)(int64_t)pi_rec.end_status,
                                     (uint64_t)pi_rec.end_reason, pi_background_cpu_ns());
            /* before its first periodic frame, a process that recorded nothing but
             * our own records needs no file yet, and none if it ends now */
            if ((stopping || flush_asked) && w->fd < 0 && w->staged == w->staged_own) {
                w->staged = w->staged_own = 0;
                idle = 1;
            }
            if (!idle) {
                stage_clock_sync(w);
                pi_writer_check_not_removed(w, now);
                pi_writer_flush_staging(w);
                w->last_frame_ns = now;
            }
            w->next_flush_ns = now + pi_rec.config.flush_interval_ns;
            if (!stopping && !w->settled++) /* once, at the first flush: see process_events.h */
                pi_process_event_notify(PI_EVENT_SETTLED);
            if (flush_asked || stopping) { /* only an asked-for flush has waiters */
                atomic_store(&pi_rec.flush_done, requested);
                pi_futex_wake(&pi_rec.flush_done, INT32_MAX);
            }
        }
        if (stopping)
            return;
        uint64_t deadline = w->next_flush_ns;
        /* a writer that failed takes no samples: their moment, never moved on, would be
         * past for good and the wait below never made (a CPU spun for the rest of the job) */
        if (sample_ns && !w->failed && w->next_sample_ns < deadline)
            deadline = w->next_sample_ns;
        now = pi_clock_ns(CLOCK_MONOTONIC);
        if (deadline > now)
            pi_futex_wait(&pi_rec.writer_wake, 0, deadline - now);
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    struct pi_writer *w = &pi_rec.writer;
    w->failed = 0;
    w->staged = 0;
    w->frame_sequence = 0;
    w->sample_gap_ns = 0; /* a fork child's writer starts afresh */
    w->rate_refined = 0; /* each process refines the rate once over its own first 50 ms */
    w->process_cpu_ns = 0;
    w->staged_own = 0;
    w->settled = 0;
    if (pi_rec.config.summary)
        pi_summary_mode_start(summary_stage, summary_define, w);
    /* the rate every part of the library converts with (CUPTI's clock map, the
     * wait threshold), from the start: the file and its header come later */
    if (pi_rec.ticks_per_second == 0)
        set_tick_rate(pi_clock_rate_since(pi_rec.start_ticks, pi_rec.start_monotonic_ns,
                                          PI_FIRST_RATE_MIN_NS));
    else
        set_tick_rate(pi_rec.ticks_per_second); /* a fork child's, inherited */
    w->open_file = open_trace_file;
    pi_process_sampler_open(&w->sampler, pi_clock_ns(CLOCK_MONOTONIC));
    w->schedstat_fd = pi_run_delay_open(pi_rec.pid);
    pi_memory_cgroup_open(&w->memory_cgroup);
    writer_loop(w);
    if (w->fd >= 0)
        pi_sys_close(w->fd);
    pi_process_sampler_close(&w->sampler);
    pi_memory_cgroup_close(&w->memory_cgroup);
    if (w->schedstat_fd >= 0)
        pi_sys_close(w->schedstat_fd);
    w->fd = -1;
    w->schedstat_fd = -1;
    atomic_store(&pi_rec.writer_running, 0);
    atomic_store(&pi_rec.writer_finished, 1);
    pi_futex_wake(&pi_rec.writer_finished, INT32_MAX);
    pi_futex_wake(&pi_rec.flush_done, INT32_MAX);
    return NULL;
}

int pi_writer_launch(void)
{
    struct pi_writer *w = &pi_rec.writer;
    if (w->fd > 0)
        pi_sys_close(w->fd); /* the parent's file, inherited through fork */
    pi_process_sampler_close(&w->sampler);
    pi_memory_cgroup_close(&w->memory_cgroup);
    if (w->schedstat_fd > 0)
        pi_sys_close(w->schedstat_fd); /* the parent's main thread's */
    w->fd = -1;
    w->schedstat_fd = -1;
    if (pi_writer_allocate(w) != 0) {
        pi_diag("cannot allocate the writer's buffers; the program runs untraced");
        return -1;
    }
    /* The writer must never take a signal meant for the application. */
    atomic_store(&pi_rec.writer_running, 1);
    int err = pi_background_thread("pi-writer", writer_main, NULL);
    if (err != 0) {
        atomic_store(&pi_rec.writer_running, 0);
        pi_diag("cannot start the writer thread: %s; the program runs untraced", strerror(err));
        return -1;
    }
    return 0;
}
