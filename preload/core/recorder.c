/*
 * recorder.c - application side of the recorder: thread state, the hot
 * path, start, stop and fork handling. The writer thread is in writer.c.
 */
#include "recorder_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "background_thread.h"
#include "diagnostics.h"
#include "process_events.h"
#include "process_sample.h"
#include "raw_syscalls.h"
#include "trace_file.h"
#include "unfinished_writer.h"

/* How long a process that ends waits for the writer's last frames. */
#define WRITER_FINISH_MS 5000u

__thread struct pi_thread pi_tls __attribute__((tls_model("initial-exec")));
_Atomic uint32_t pi_generation;

uint32_t pi_current_tid(void)
{
    struct pi_thread *t = &pi_tls;
    uint32_t generation = atomic_load_explicit(&pi_generation, memory_order_relaxed);
    if (t->generation != generation || t->tid == 0)
        return pi_sys_gettid(); /* not cached yet; pi_emit will cache it */
    return t->tid;
}

double pi_recorder_ticks_per_second(void)
{
    double rate;
    __atomic_load(&pi_rec.ticks_per_second, &rate, __ATOMIC_RELAXED);
    if (rate > 0)
        return rate;
    return pi_clock_rate_since(pi_rec.start_ticks, pi_rec.start_monotonic_ns,
                               PI_FIRST_RATE_MIN_NS);
}

int pi_recorder_summary_mode(void)
{
    return pi_rec.config.summary;
}

int pi_recorder_pid(void)
{
    return pi_rec.pid;
}

int pi_recorder_owns_process(void)
{
    /* a vfork child (posix_spawn, Python's subprocess) shares this memory but has its own
     * pid; a fork child's pid is taken by its after-fork handler before it returns */
    return atomic_load(&pi_rec.state) == PI_STATE_RUNNING && (int)syscall(SYS_getpid) == pi_rec.pid;
}

int pi_recorder_state(void)
{
    return atomic_load(&pi_rec.state);
}

static void thread_key_destructor(void *value)
{
    (void)value;
    pi_thread_exit();
}

static struct pi_thread_slot *claim_slot(uint32_t tid)
{
    for (uint32_t i = 1; i < PI_THREAD_SLOTS; i++) {
        struct pi_thread_slot *slot = &pi_rec.thread_slots[(tid + i) % (PI_THREAD_SLOTS - 1) + 1];
        uint32_t expected = PI_SLOT_FREE;
        if (atomic_load_explicit(&slot->state, memory_order_relaxed) == PI_SLOT_FREE &&
            atomic_compare_exchange_strong(&slot->state, &expected, PI_SLOT_IN_USE)) {
            atomic_store(&slot->tid, tid);
            uint32_t index = (uint32_t)(slot - pi_rec.thread_slots), used;
            while ((used = atomic_load(&pi_rec.thread_slots_used)) <= index &&
                   !atomic_compare_exchange_weak(&pi_rec.thread_slots_used, &used, index + 1))
                ;
            return slot;
        }
    }
    return &pi_rec.thread_slots[0];
}

/* A thread seen for the first time in this process (or after fork). */
static void thread_adopt(struct pi_thread *t, uint32_t generation)
{
    t->generation = generation;
    t->tid = pi_sys_gettid();
    t->buf = NULL;
    t->pos = 0;
    t->slot = claim_slot(t->tid);
    t->wait = t->slot != &pi_rec.thread_slots[0] ? &t->slot->wait : NULL;
    if (t->wait)
        atomic_store(&t->wait->since, 0);
    /* one buffer per live thread: room for this one before it looks, off
     * the path of a record (once per thread, a system call per chunk) */
    uint32_t live = atomic_fetch_add_explicit(&pi_rec.live_threads, 1, memory_order_relaxed) + 1;
    pi_pool_grow(&pi_rec.pool, live);
    /* Register for the destructor so the buffer is handed over at thread
     * exit. pthread_setspecific does not allocate for the first 32 keys. */
    if (pi_rec.thread_key_ok)
        pthread_setspecific(pi_rec.thread_key, (void *)1);
}

/* No buffer is free: threads came faster than the pool grew, or the writer is behind (on
 * a busy machine it may not run for a while). Rather than drop, map one more chunk while
 * the pool is under about twice the live threads (a buffer each, and as many waiting for
 * the writer), after a thread that is growing it already. A writer that stays behind is
 * still said as such: a pool this size then fills too, and records are dropped. */
static struct pi_buffer *acquire_grown(struct pi_buffer_pool *pool)
{
    uint32_t live = atomic_load_explicit(&pi_rec.live_threads, memory_order_relaxed);
    for (int tries = 0; tries < 100; tries++) {
        int grew = pi_pool_grow(pool, 2 * live);
        struct pi_buffer *buf = pi_pool_acquire(pool);
        if (buf || grew < 0)
            return buf;
        if (grew == 0 && !atomic_load_explicit(&pool->growing, memory_order_acquire))
            return NULL; /* as large as it may be */
        pi_sys_yield();
    }
    return NULL;
}

/* Slow path of pi_emit: get a buffer with room. NULL means drop. */
static struct pi_buffer *pi_thread_refill(struct pi_thread *t)
{
    uint32_t generation = atomic_load_explicit(&pi_generation, memory_order_relaxed);
    if (t->generation != generation)
        thread_adopt(t, generation);
    struct pi_buffer_pool *pool = &pi_rec.pool;
    if (t->buf) {
        pi_pool_retire(pool, t->buf);
        t->buf = NULL;
        if (atomic_load_explicit(&pool->free_count, memory_order_relaxed) <
            atomic_load_explicit(&pool->count, memory_order_relaxed) / 2)
            pi_writer_wake();
    }
    struct pi_buffer *buf = pi_pool_acquire(pool);
    /* the threads hold most buffers: the writer grows the pool before none is left */
    if (!buf || pi_pool_running_low(pool))
        pi_writer_wake();
    if (!buf)
        buf = acquire_grown(pool);
    if (!buf)
        return NULL;
    t->buf = buf;
    t->pos = 0;
    return buf;
}

/* A buffer filled or a flush is asked for: the writer's futex, woken once per request. */
void pi_writer_wake(void)
{
    if (atomic_exchange(&pi_rec.writer_wake, 1) == 0)
        pi_futex_wake(&pi_rec.writer_wake, 1);
}

void pi_emit_slow(uint16_t kind, uint16_t flags, uint64_t ts, uint64_t dur, uint64_t arg0,
                  uint64_t arg1, uint64_t arg2)
{
    struct pi_thread *t = &pi_tls;
    struct pi_buffer *buf = pi_thread_refill(t);
    if (!buf) {
        /* uncontended: the slot is this thread's own cache line */
        atomic_fetch_add_explicit(&t->slot->lost, 1, memory_order_relaxed);
        return;
    }
    pi_emit_into(t, buf, kind, flags, ts, dur, arg0, arg1, arg2);
}

void pi_thread_exit(void)
{
    struct pi_thread *t = &pi_tls;
    if (t->generation != atomic_load_explicit(&pi_generation, memory_order_relaxed))
        return;
    uint64_t cpu = pi_thread_cpu_in_trace(t->tid);
    /* a thread that ends as the process does (after a join of Python's, which returns before
     * the thread's own end) may come after the writer stopped recording: its end record is
     * then left in its slot for the writer's last pass, else its CPU time is lost */
    int unsaid = !atomic_load_explicit(&pi_recording, memory_order_relaxed) &&
                 atomic_load(&pi_rec.stop_requested);
    pi_emit(PI_REC_THREAD_EXIT, 0, pi_clock_ticks(), 0, cpu, PI_THREAD_CPU_MEASURED, 0);
    if (t->buf) {
        pi_pool_retire(&pi_rec.pool, t->buf);
        t->buf = NULL;
    }
    atomic_fetch_sub_explicit(&pi_rec.live_threads, 1, memory_order_relaxed);
    /* the writer reports what is left in the slot under this tid, then frees it */
    if (t->slot && t->slot != &pi_rec.thread_slots[0]) {
        if (unsaid)
            atomic_store(&t->slot->unsaid_exit_cpu_ns, cpu ? cpu : 1);
        atomic_store(&t->slot->state, PI_SLOT_ENDED);
    }
    t->slot = NULL;
    t->wait = NULL;
    t->generation = 0; /* a later event re-adopts the thread */
}

uint32_t pi_intern(const char *text, uint64_t length)
{
    if (atomic_load_explicit(&pi_rec.state, memory_order_relaxed) != PI_STATE_RUNNING)
        return 0;
    return pi_strings_intern(&pi_rec.strings, text, length);
}

uint32_t pi_intern_cstr(const char *text)
{
    return text ? pi_intern(text, strlen(text)) : 0;
}

uint32_t pi_intern_path(const char *text, uint64_t length)
{
    if (atomic_load_explicit(&pi_rec.state, memory_order_relaxed) != PI_STATE_RUNNING)
        return 0;
    return pi_rec.config.summary ? pi_strings_intern_quiet(&pi_rec.strings, text, length)
                                 : pi_strings_intern(&pi_rec.strings, text, length);
}

uint32_t pi_intern_kind(uint16_t kind, const void *bytes, uint64_t length)
{
    if (atomic_load_explicit(&pi_rec.state, memory_order_relaxed) != PI_STATE_RUNNING)
        return 0;
    return pi_strings_intern_kind(&pi_rec.strings, kind, bytes, length);
}

const void *pi_interned_bytes(uint32_t id, uint32_t *length)
{
    return pi_strings_get(&pi_rec.strings, id, length);
}

int pi_recorder_start(const struct pi_config *config)
{
    int expected = PI_STATE_UNINIT;
    if (!atomic_compare_exchange_strong(&pi_rec.state, &expected, PI_STATE_STARTING))
        return atomic_load(&pi_rec.state) == PI_STATE_RUNNING ? 0 : -1;
    pi_rec.config = *config;
    if (config->disabled) {
        atomic_store(&pi_rec.state, PI_STATE_STOPPED);
        return -1;
    }
    pi_clock_init(config->clock);
    pi_clock_sync_point(&pi_rec.start_ticks, &pi_rec.start_monotonic_ns);
    pi_rec.start_realtime_ns = pi_clock_ns(CLOCK_REALTIME);
    /* until the writer has measured the tick rate, assume at most 3 ticks per ns */
    pi_wait_threshold_ticks = config->wait_threshold_ns * (pi_clock_uses_tsc ? 3 : 1);
    pi_rec.pid = getpid();
    pi_rec.main_cpu_start_ns = pi_clock_thread_cpu_ns((uint32_t)pi_rec.pid);
    atomic_store(&pi_generation, 1);
    if (pi_pool_init(&pi_rec.pool, config->buffer_count, config->buffer_max_count,
                     config->buffer_records) != 0 ||
        pi_strings_init(&pi_rec.strings, 65536, 8u << 20) != 0) {
        pi_diag("cannot map %u KiB of trace buffers (%s); the program runs untraced",
                (unsigned)((uint64_t)config->buffer_count * config->buffer_records *
                           PI_RECORD_SIZE / 1024),
                strerror(errno));
        atomic_store(&pi_rec.state, PI_STATE_STOPPED);
        return -1;
    }
    pi_rec.thread_key_ok = pthread_key_create(&pi_rec.thread_key, thread_key_destructor) == 0;
    atomic_store(&pi_recording, 1);
    atomic_store(&pi_rec.state, PI_STATE_RUNNING);
    if (pi_writer_launch() != 0) {
        atomic_store(&pi_recording, 0);
        atomic_store(&pi_rec.state, PI_STATE_STOPPED);
        return -1;
    }
    return 0;
}

/* Wait until *@word differs from @value or @timeout_ms passed; 0 if it changed. */
static int wait_for_change(_Atomic uint32_t *word, uint32_t value, unsigned timeout_ms,
                           int (*done)(uint32_t now, uint32_t value))
{
    uint64_t start = pi_clock_ns(CLOCK_MONOTONIC);
    uint64_t limit = (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        uint32_t now = atomic_load(word);
        if (done(now, value))
            return 0;
        uint64_t elapsed = pi_clock_ns(CLOCK_MONOTONIC) - start;
        if (elapsed >= limit || !atomic_load(&pi_rec.writer_running))
            return done(atomic_load(word), value) ? 0 : -1;
        uint64_t slice = limit - elapsed;
        pi_futex_wait(word, now, slice < 10000000u ? slice : 10000000u);
    }
}

static int reached(uint32_t now, uint32_t target)
{
    return (int32_t)(now - target) >= 0;
}

static int nonzero(uint32_t now, uint32_t unused)
{
    (void)unused;
    return now != 0;
}

int pi_recorder_flush_sync(unsigned timeout_ms)
{
    if (atomic_load(&pi_rec.state) != PI_STATE_RUNNING || !atomic_load(&pi_rec.writer_running))
        return -1;
    uint32_t target = atomic_fetch_add(&pi_rec.flush_requested, 1) + 1;
    pi_writer_wake();
    return wait_for_change(&pi_rec.flush_done, target, timeout_ms, reached);
}

void pi_recorder_stop(int reason, int status)
{
    int expected = PI_STATE_RUNNING;
    if (!atomic_compare_exchange_strong(&pi_rec.state, &expected, PI_STATE_STOPPED))
        return;
    pi_rec.end_reason = reason;
    pi_rec.end_status = status;
    if (!atomic_load(&pi_rec.writer_running)) {
        atomic_store(&pi_recording, 0);
        return;
    }
    /* The calling thread's last records are committed; the writer drains
     * every buffer once more after recording is switched off. */
    atomic_store(&pi_rec.stop_requested, 1);
    pi_writer_wake();
    if (wait_for_change(&pi_rec.writer_finished, 0, WRITER_FINISH_MS, nonzero) != 0)
        pi_writer_abandon(WRITER_FINISH_MS);
}

static void start_afresh_in_child(void)
{
    /* Only the forking thread exists now. Records in the buffers belong
     * to the parent, which writes them; the child starts empty. */
    atomic_fetch_add(&pi_generation, 1);
    pi_resident_after_fork(); /* the parent's /proc/self */
    int parent_pid = pi_rec.pid;
    uint64_t parent_start_realtime_ns = pi_rec.start_realtime_ns;
    pi_rec.pid = getpid();
    pi_rec.fork_child = 1;
    pi_clock_sync_point(&pi_rec.start_ticks, &pi_rec.start_monotonic_ns);
    pi_rec.start_realtime_ns = pi_clock_ns(CLOCK_REALTIME);
    pi_rec.main_cpu_start_ns = pi_clock_thread_cpu_ns((uint32_t)pi_rec.pid); /* a new thread */
    pi_pool_reset(&pi_rec.pool);
    atomic_store(&pi_rec.live_threads, 0); /* the forking thread counts again as it records */
    pi_rec.inherited_below = pi_strings_inherit(&pi_rec.strings);
    pi_trace_file_parent_name(pi_rec.parent_file, sizeof(pi_rec.parent_file), pi_rec.trace_path,
                              parent_pid, parent_start_realtime_ns);
    /* only slots ever claimed were written: leave the rest untouched (no copy-on-write) */
    uint32_t used = atomic_load(&pi_rec.thread_slots_used);
    for (uint32_t i = 0; i < used && i < PI_THREAD_SLOTS; i++) {
        atomic_store(&pi_rec.thread_slots[i].lost, 0);
        atomic_store(&pi_rec.thread_slots[i].unsaid_exit_cpu_ns, 0);
        atomic_store(&pi_rec.thread_slots[i].wait.since, 0);
        atomic_store(&pi_rec.thread_slots[i].state, PI_SLOT_FREE);
    }
    atomic_store(&pi_rec.flush_requested, 0);
    atomic_store(&pi_rec.flush_done, 0);
    atomic_store(&pi_rec.stop_requested, 0);
    atomic_store(&pi_rec.writer_finished, 0);
    atomic_store(&pi_rec.writer_running, 0);
    atomic_store(&pi_rec.writer_wake, 0);
    atomic_store(&pi_rec.write_gate, PI_WRITE_GATE_OPEN); /* the parent's writer may have held it */
    atomic_store(&pi_rec.sequence_written, 0);
    atomic_store(&pi_rec.stat_records, 0);
    atomic_store(&pi_rec.stat_lost, 0);
    atomic_store(&pi_rec.stat_frames, 0);
    atomic_store(&pi_rec.stat_bytes, 0);
    atomic_store(&pi_rec.stat_raw_bytes, 0);
    atomic_store(&pi_rec.stat_wakes, 0);
    pi_rec.trace_path[0] = '\0';
}

void pi_recorder_after_fork_child(void)
{
    pi_background_after_fork();
    int running = atomic_load(&pi_rec.state) == PI_STATE_RUNNING;
    if (running)
        start_afresh_in_child();
    /* The child's handlers run before its writer: the writer may settle at its first wake
     * (PI_EVENT_SETTLED), and what settles must find the parent's state gone. A worker's
     * control socket made first was closed by the handler that closes the parent's, whose
     * descriptor stayed: `profinject top` then missed the worker (process samples 200 ms
     * apart make the first wake settle). */
    pi_process_event_notify(PI_EVENT_FORK_CHILD);
    if (running && pi_writer_launch() != 0) {
        atomic_store(&pi_recording, 0);
        atomic_store(&pi_rec.state, PI_STATE_STOPPED);
    }
}

void pi_recorder_get_stats(struct pi_recorder_stats *stats)
{
    stats->records_written = atomic_load(&pi_rec.stat_records);
    stats->records_lost = atomic_load(&pi_rec.stat_lost);
    stats->frames_written = atomic_load(&pi_rec.stat_frames);
    stats->bytes_written = atomic_load(&pi_rec.stat_bytes);
    stats->bytes_uncompressed = atomic_load(&pi_rec.stat_raw_bytes);
    stats->writer_wakes = atomic_load(&pi_rec.stat_wakes);
}

const char *pi_recorder_trace_path(void)
{
    return pi_rec.trace_path;
}
