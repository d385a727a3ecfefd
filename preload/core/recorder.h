/*
 * recorder.h - the recorder core: per-thread buffers, the writer, one trace
 * file per process. Hook files call pi_emit; nothing here knows about CUDA,
 * files or threads as subjects of profiling. Unit tests drive this API
 * directly, without any interposition.
 */
#ifndef PI_RECORDER_H
#define PI_RECORDER_H

#include <stdatomic.h>
#include <stdint.h>

#include "buffer_pool.h"
#include "clock.h"
#include "config.h"
#include "profinject/trace_format.h"

enum pi_recorder_state {
    PI_STATE_UNINIT = 0,
    PI_STATE_STARTING = 1,
    PI_STATE_RUNNING = 2,
    PI_STATE_STOPPED = 3, /* finished, failed or disabled: hooks pass through */
};

/* Hot-path switch: 0 while nothing is recorded, else the clock tick a record
 * must end at or after to be kept: 1 from the start, a capture window's
 * opening time after a pause. A thread interrupted between its clock read
 * and this test would otherwise write an event of the pause into the window. */
extern _Atomic uint64_t pi_recording;

/* Waits shorter than this many clock ticks are not recorded (PROFINJECT_WAIT_US);
 * estimated at start, exact once the writer has measured the clock. */
extern uint64_t pi_wait_threshold_ticks;

/**
 * pi_recorder_start - set up buffers and strings, start the writer thread
 * @config: settings; copied
 *
 * Return: 0 when recording, -1 when the profiler stays off (reason printed).
 */
int pi_recorder_start(const struct pi_config *config);

/**
 * pi_recorder_stop - record the end of the process, write everything, close the file
 * @reason: enum pi_end_reason
 * @status: exit status or signal number
 *
 * Waits for the writer at most a few seconds. Safe to call more than once.
 */
void pi_recorder_stop(int reason, int status);

/* pi_recorder_state - enum pi_recorder_state */
int pi_recorder_state(void);

/**
 * pi_recorder_after_fork_child - in a fork child: new file, new writer, no parent records
 *
 * Called from the fork hook in the child, after the real fork returned; runs the
 * PI_EVENT_FORK_CHILD handlers before the child's writer starts.
 */
void pi_recorder_after_fork_child(void);

/**
 * pi_recorder_flush_sync - write everything recorded so far and wait for it
 * @timeout_ms: longest wait
 *
 * Async-signal-safe (atomics and futex only).
 * Return: 0 when flushed, -1 on timeout or when not recording.
 */
int pi_recorder_flush_sync(unsigned timeout_ms);

/*
 * The wait a thread is blocked in, while it is: a wait that never ends
 * leaves no PI_REC_WAIT, so the death and stop records say it from here
 * (PI_REC_WAIT_IN_FLIGHT). Written by its thread only, read by the thread
 * that ends the process: @since last on the way in (release), first on the
 * way out, so a reader that sees it set sees the rest of this wait.
 */
struct pi_wait_in_flight {
    _Atomic uint64_t since;         /* clock ticks when it began; 0: not blocked */
    _Atomic uint64_t object;        /* a wait's address, an I/O call's descriptor */
    _Atomic uint32_t what;          /* PI_IN_FLIGHT_WAIT or PI_IN_FLIGHT_IO_CALL */
    uint32_t unused;
    void *_Atomic python_thread;    /* its Python thread state, for its frames; NULL: none */
};

/* Per-thread state. initial-exec TLS: no allocation and no lock on first
 * access, which a preloaded object can rely on (it is loaded at start). */
struct pi_thread {
    uint32_t generation; /* pi_generation when this state was set up */
    uint32_t tid;
    struct pi_buffer *buf;
    uint32_t pos;
    struct pi_thread_slot *slot; /* where this thread counts its drops */
    struct pi_wait_in_flight *wait; /* in its slot; NULL: a shared slot, nothing kept */
};
extern __thread struct pi_thread pi_tls __attribute__((tls_model("initial-exec")));
/* changes in a fork child: thread state from before the fork is stale */
extern _Atomic uint32_t pi_generation;

/* pi_emit_slow - pi_emit when the thread needs a (new) buffer; drops and counts if none */
void pi_emit_slow(uint16_t kind, uint16_t flags, uint64_t ts, uint64_t dur, uint64_t arg0,
                  uint64_t arg1, uint64_t arg2);

static inline void pi_emit_into(struct pi_thread *t, struct pi_buffer *buf, uint16_t kind,
                                uint16_t flags, uint64_t ts, uint64_t dur, uint64_t arg0,
                                uint64_t arg1, uint64_t arg2)
{
    struct pi_record *r = &buf->records[t->pos];
    r->kind = kind;
    r->flags = flags;
    r->tid = t->tid;
    r->ts = ts;
    r->dur = dur;
    r->arg[0] = arg0;
    r->arg[1] = arg1;
    r->arg[2] = arg2;
    t->pos++;
    /* release: the writer that reads this count sees the record */
    atomic_store_explicit(&buf->committed, t->pos, memory_order_release);
}

/**
 * pi_emit_while_paused - append one record whether recording is on or not:
 * the record that closes a capture window, written after recording stopped
 * so that no other record comes later than it
 */
static inline void pi_emit_while_paused(uint16_t kind, uint16_t flags, uint64_t ts, uint64_t dur,
                                        uint64_t arg0, uint64_t arg1, uint64_t arg2)
{
    struct pi_thread *t = &pi_tls;
    struct pi_buffer *buf = t->buf;
    if (__builtin_expect(t->generation != atomic_load_explicit(&pi_generation,
                                                               memory_order_relaxed) ||
                             buf == NULL || t->pos >= buf->capacity,
                         0)) {
        pi_emit_slow(kind, flags, ts, dur, arg0, arg1, arg2);
        return;
    }
    pi_emit_into(t, buf, kind, flags, ts, dur, arg0, arg1, arg2);
}

/* The calling thread's Python thread state (PyGILState_GetThisThreadState), once an
 * interpreter is found; NULL before. */
extern void *(*_Atomic pi_wait_python_thread)(void);

/**
 * pi_wait_begin - the calling thread is about to block in @what (PI_IN_FLIGHT_WAIT,
 * PI_IN_FLIGHT_IO_CALL) on @object, since @since (clock ticks): kept until pi_wait_end
 * for a death or stop to tell. A few stores; nothing for a thread that never recorded.
 */
static inline void pi_wait_begin(uint32_t what, uint64_t object, uint64_t since)
{
    struct pi_wait_in_flight *w = pi_tls.wait;
    if (!w || pi_tls.generation != atomic_load_explicit(&pi_generation, memory_order_relaxed))
        return;
    void *(*python_thread)(void) = atomic_load_explicit(&pi_wait_python_thread,
                                                        memory_order_relaxed);
    atomic_store_explicit(&w->object, object, memory_order_relaxed);
    atomic_store_explicit(&w->what, what, memory_order_relaxed);
    atomic_store_explicit(&w->python_thread, python_thread ? python_thread() : NULL,
                          memory_order_relaxed);
    atomic_store_explicit(&w->since, since ? since : 1, memory_order_release);
}

/* pi_wait_end - the wait of pi_wait_begin returned */
static inline void pi_wait_end(void)
{
    struct pi_wait_in_flight *w = pi_tls.wait;
    if (w)
        atomic_store_explicit(&w->since, 0, memory_order_relaxed);
}

/* A thread's wait in flight, as pi_waits_in_flight copies it. */
struct pi_wait_snapshot {
    uint32_t tid, what;
    uint64_t since, object;
    void *python_thread;
    uint32_t slot; /* where it was read */
};

/**
 * pi_waits_in_flight - the threads of this process blocked now, into @out
 * (at most @max): async-signal-safe, for the thread that ends the process
 * Return: how many.
 */
int pi_waits_in_flight(struct pi_wait_snapshot *out, int max);

/* pi_wait_of_thread - thread @tid's wait in flight into @out: 1, or 0 when it is in none */
int pi_wait_of_thread(uint32_t tid, struct pi_wait_snapshot *out);

/* pi_wait_still - whether the thread of @s is still in that same wait */
int pi_wait_still(const struct pi_wait_snapshot *s);

/**
 * pi_emit - append one record to the calling thread's buffer, while recording
 *
 * The hot path, inlined into every hook: no lock, no malloc, no syscall
 * except when a buffer fills. Drops and counts the record when no buffer
 * is free.
 */
static inline void pi_emit(uint16_t kind, uint16_t flags, uint64_t ts, uint64_t dur,
                           uint64_t arg0, uint64_t arg1, uint64_t arg2)
{
    uint64_t since = atomic_load_explicit(&pi_recording, memory_order_relaxed);
    if (since && ts + dur >= since)
        pi_emit_while_paused(kind, flags, ts, dur, arg0, arg1, arg2);
}

/**
 * pi_intern - id of a string (name, path) for use in a record
 * Return: the id, 0 when the table is full or the recorder is off.
 */
uint32_t pi_intern(const char *text, uint64_t length);

/* pi_intern_cstr - pi_intern for a NUL-terminated string, NULL gives 0 */
uint32_t pi_intern_cstr(const char *text);

/**
 * pi_intern_path - pi_intern for the path of an opened file, which I/O
 * records name: in summary mode, quiet (string_table.h), since regular
 * files are counted by directory there and most paths are never written
 */
uint32_t pi_intern_path(const char *text, uint64_t length);

/**
 * pi_intern_kind - pi_intern for bytes written as record @kind
 * (PI_REC_MODULE, PI_REC_STACK): interned, written once per trace file
 * ahead of any record that names them, and again in a fork child's file
 * Return: the id (shared with strings), 0 when full or the recorder is off.
 */
uint32_t pi_intern_kind(uint16_t kind, const void *bytes, uint64_t length);

/**
 * pi_interned_bytes - the bytes of an id from pi_intern or pi_intern_kind
 * @length: receives their length
 * Return: a pointer that stays valid while the process runs, or NULL.
 */
const void *pi_interned_bytes(uint32_t id, uint32_t *length);

/* pi_thread_exit - the calling thread ends: hand its buffer to the writer */
void pi_thread_exit(void);

/* pi_current_tid - kernel thread id of the caller, cached per thread */
uint32_t pi_current_tid(void);

/* pi_recorder_ticks_per_second - clock rate; measured by the writer, estimated before */
double pi_recorder_ticks_per_second(void);

/* pi_recorder_summary_mode - nonzero in PROFINJECT_MODE=summary (core/summary_mode.h) */
int pi_recorder_summary_mode(void);

/* pi_recorder_pid - pid of the process the recorder writes for */
int pi_recorder_pid(void);

/**
 * pi_recorder_owns_process - nonzero when recording runs and the caller is the process it
 * writes for: zero in a vfork child, which shares the parent's memory (and so the
 * recorder's state) until it execs or exits, and must change none of it. A system call.
 */
int pi_recorder_owns_process(void);

/* Statistics for tests and benchmarks. */
struct pi_recorder_stats {
    uint64_t records_written;
    uint64_t records_lost;
    uint64_t frames_written;
    uint64_t bytes_written;
    uint64_t bytes_uncompressed;
    uint64_t writer_wakes;
};

/* pi_recorder_get_stats - counters of the writer so far */
void pi_recorder_get_stats(struct pi_recorder_stats *stats);

/* pi_recorder_trace_path - path of this process's trace file, "" if none */
const char *pi_recorder_trace_path(void);

#endif
