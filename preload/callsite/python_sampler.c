/*
 * python_sampler.c - time samples of the main thread's Python frames (see
 * python_sampler.h).
 *
 * The sampling thread starts when the interpreter is found (not in every
 * process the library is loaded into) and again in each fork child (a
 * DataLoader worker runs Python too). It only asks: one request at a time
 * is outstanding, so a main thread stuck in a long native call gets one
 * sample when it returns, weighted by the whole span.
 *
 * Up to 3.12, Py_AddPendingCall from a thread other than the main one
 * queues the call but leaves the interpreter's eval_breaker unset (it is
 * computed with _Py_ThreadCanHandlePendingCalls() of the calling thread), so
 * the call waited until the main thread next took the GIL back: a loop of
 * pure Python got no sample at all (measured: 0 of 30 in a 300 ms loop on
 * 3.9 to 3.12, 30 on 3.13). So the sampler also sets eval_breaker, a flag
 * that only makes the main thread look at what is pending, and clears
 * itself when it has. Its place is the version's layout, checked before it
 * is ever written: from the main thread at a sample, the recursion limit
 * beside it must read what Py_GetRecursionLimit() says; or, for a main
 * thread that never gives the GIL up (a loop of pure Python from the start,
 * which no sample reaches otherwise), from the sampling thread right after
 * a request: pending.calls_to_do must read 1, eval_breaker 0 or 1, and the
 * recursion limit a plausible one.
 *
 * The flag is set only while the main thread holds the GIL. Up to 3.11 a
 * thread other than the main one that finds it set cannot serve the call
 * and leaves it set (CPython computes it per thread, at each take of the
 * GIL): with the main thread blocked off the GIL (in a join, waiting for
 * that very thread), the other ran its whole time through the pending
 * check (3.9: 44% more CPU for a loop of pure Python), and on 3.11 under a
 * tracer (a debugger, coverage) it looped for ever in it: a traced
 * function's first instruction checks the flag again before it runs. So the
 * holder of the GIL, which any thread can read there, must be the main
 * thread (as the last sample saw it) before the flag is set and again
 * after: a hand-over between the two may have let another thread compute
 * its own flag before ours landed, and ours is then taken back. 3.12's
 * other threads clear it themselves. Before the main thread is known, it
 * is set for the first request where the main thread runs alone (the
 * interpreter starting, a fork child); else (attached to a running job, a
 * paused start) the main thread serves the call as it next takes the GIL
 * back, which then makes it known.
 */
#include "python_sampler.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/background_thread.h"
#include "core/clock.h"
#include "core/diagnostics.h"
#include "core/guard.h"
#include "core/process_events.h"
#include "core/raw_syscalls.h"
#include "core/recorder.h"
#include "core/settings.h"
#include "native_sampler.h"
#include "python_frames.h"
#include "python_runtime.h"
#include "python_spans.h"
#include "python_thread_names.h"
#include "stacks.h"

/* Deep enough for a Trainer's loop under a model's modules. */
#define SAMPLE_FRAMES_MAX 96

static uint64_t interval_ns;     /* 0: no sampling */
static _Atomic int requested;    /* a pending call is on its way */
static _Atomic uint32_t sampler_wake; /* 1: the main thread woke the sampling thread */
static _Atomic int backing_off;      /* the sampling thread sleeps longer than the interval */
static _Atomic int thread_started;
static uint64_t last_ticks;      /* the previous sample, main thread only; 0: none */
static uint64_t last_cpu_ns;     /* the main thread's CPU clock then; 0: not read */
/* The moment of the first request while no span is open: where the first span starts. A main
 * thread that serves no request until it next takes the GIL back (before eval_breaker is
 * known, see above) would otherwise lose its first span whole: a script's first 250 ms
 * asleep went unsampled in 6 of 20 runs. */
static _Atomic uint64_t first_request;
static _Atomic int *_Atomic eval_breaker; /* checked, or NULL: see above */
static int breaker_checked;              /* main thread only */
static void *_Atomic main_state;         /* the main thread's PyThreadState, once sampled */
static _Atomic int forked;               /* a fork child's first request: its one thread */

/* The main interpreter, when this version's layout has an eval_breaker: its recursion
 * limit, read beside it, in @limit. */
static char *interpreter_with_breaker(const struct pi_python *py, int *limit)
{
    char *interp = py->main_interpreter ? py->main_interpreter() : NULL;
    if (!interp || !py->layout.interp_eval_breaker)
        return NULL;
    memcpy(limit, interp + py->layout.interp_recursion_limit, sizeof(*limit));
    return interp;
}

/* In the sampling thread, right after a request was queued: the three fields agree with
 * the layout (see above). */
static void check_eval_breaker_from_sampler(const struct pi_python *py)
{
    const struct pi_python_layout *l = &py->layout;
    int limit, breaker, calls;
    char *interp = interpreter_with_breaker(py, &limit);
    const char *queue = l->runtime_calls_to_do && py->runtime ? py->runtime + l->runtime_calls_to_do
                        : l->interp_calls_to_do && interp ? interp + l->interp_calls_to_do
                                                          : NULL;
    if (!interp || !queue || atomic_load(&eval_breaker))
        return;
    memcpy(&breaker, interp + l->interp_eval_breaker, sizeof(breaker));
    memcpy(&calls, queue, sizeof(calls));
    if (calls == 1 && (breaker == 0 || breaker == 1) && limit >= 10 && limit <= 100000000)
        atomic_store(&eval_breaker, (_Atomic int *)(interp + l->interp_eval_breaker));
}

/* In the main thread holding the GIL: the recursion limit beside it is Python's own, once. */
static void check_eval_breaker(const struct pi_python *py)
{
    if (breaker_checked)
        return;
    breaker_checked = 1;
    int limit;
    char *interp = interpreter_with_breaker(py, &limit);
    if (interp && py->recursion_limit && limit == py->recursion_limit())
        atomic_store(&eval_breaker, (_Atomic int *)(interp + py->layout.interp_eval_breaker));
}

/* The pending call: in the main thread, holding the GIL, between bytecodes. Returns 0, raises nothing. */
static int take_sample(void *unused)
{
    (void)unused;
    int saved = errno;
    int guard = pi_guard_enter();
    atomic_store_explicit(&requested, 0, memory_order_relaxed);
    uint64_t now = pi_clock_ticks();
    const struct pi_python *py = pi_python_get();
    if (py && pi_python_holds_gil(py)) /* a pending call runs in the main thread only */
        atomic_store_explicit(&main_state, py->current_thread_state(), memory_order_relaxed);
    if (!atomic_load_explicit(&pi_recording, memory_order_relaxed) || !py ||
        !pi_python_holds_gil(py)) {
        last_ticks = 0; /* paused: the next span starts with the next window */
        last_cpu_ns = 0;
        atomic_store_explicit(&first_request, 0, memory_order_relaxed);
    } else {
        /* the thread's CPU over the span beside its wall time: time ready to run without a
         * CPU goes to the line it resumed at (a thread preempted as a system call returns,
         * under load, piles wall time on the line after it) */
        uint64_t cpu_ns = pi_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (!last_ticks) {
            last_ticks = atomic_exchange_explicit(&first_request, 0, memory_order_relaxed);
            last_cpu_ns = 0; /* the span began in the sampling thread: its CPU unknown */
        }
        if (last_ticks && last_ticks < now) {
            struct pi_stack_frame frames[SAMPLE_FRAMES_MAX];
            int n = pi_python_frames(py, frames, SAMPLE_FRAMES_MAX, 1);
            /* a full stack table still counts the time, marked as lost frames */
            uint32_t stack = n > 0 ? pi_stack_intern(frames, n, 0) : 0;
            int cpu_known = last_cpu_ns && cpu_ns >= last_cpu_ns;
            pi_emit(PI_REC_PY_SAMPLE, cpu_known ? PI_PY_SAMPLE_CPU : 0, last_ticks,
                    now - last_ticks, stack, n > 0 && !stack,
                    cpu_known ? cpu_ns - last_cpu_ns : 0);
        }
        last_ticks = now;
        last_cpu_ns = cpu_ns;
        check_eval_breaker(py);
        pi_python_spans_at_safe_point(py);
        pi_python_thread_names(py);
        pi_native_sampler_here();
        if (atomic_load_explicit(&backing_off, memory_order_relaxed)) {
            atomic_store_explicit(&backing_off, 0, memory_order_relaxed);
            atomic_store_explicit(&sampler_wake, 1, memory_order_relaxed);
            pi_futex_wake(&sampler_wake, 1);
        }
    }
    pi_guard_restore(guard);
    errno = saved;
    return 0;
}

/* Whether the flag may be set for the main thread alone (see above): 3.9 to 3.11, the
 * holder of the GIL is _PyRuntime's tstate_current, which any thread can read there. */
static int main_holds_gil(const struct pi_python *py, void *main, int alone)
{
    if (((py->version >> 16) & 0xff) >= 12)
        return 1;
    return main ? py->current_thread_state() == main : alone;
}

/* Set the flag for the request just queued (see above); @alone: the main thread is the only
 * one that runs Python yet. */
static void set_eval_breaker(const struct pi_python *py, _Atomic int *breaker, int alone)
{
    void *main = atomic_load_explicit(&main_state, memory_order_relaxed);
    if (!main_holds_gil(py, main, alone))
        return; /* the main thread serves the call as it takes the GIL back */
    atomic_store(breaker, 1); /* a full barrier: the holder is read again after it */
    if (!main_holds_gil(py, main, alone)) {
        int set = 1;
        atomic_compare_exchange_strong(breaker, &set, 0);
    }
}

static void request_sample(int alone)
{
    const struct pi_python *py = pi_python_get();
    if (!py || !atomic_load_explicit(&pi_recording, memory_order_relaxed) ||
        !py->is_initialized() || py->is_finalizing())
        return;
    /* -1: the interpreter's queue is full (or it is shutting down); ask next time */
    if (atomic_exchange_explicit(&requested, 1, memory_order_relaxed))
        return;
    /* before the call is queued: its sample may come before this thread runs again */
    uint64_t none = 0;
    atomic_compare_exchange_strong_explicit(&first_request, &none, pi_clock_ticks(),
                                            memory_order_relaxed, memory_order_relaxed);
    if (py->add_pending_call(take_sample, NULL) != 0) {
        atomic_store_explicit(&requested, 0, memory_order_relaxed);
        return;
    }
    _Atomic int *breaker = atomic_load_explicit(&eval_breaker, memory_order_relaxed);
    if (!breaker) {
        check_eval_breaker_from_sampler(py);
        breaker = atomic_load_explicit(&eval_breaker, memory_order_relaxed);
    }
    if (breaker)
        set_eval_breaker(py, breaker, alone);
}

/* While a request waits (the main thread inside one call, or blocked), asking
 * again changes nothing: the sample comes when the call returns, weighted by the
 * whole span. So the thread sleeps longer then, doubling up to this, and the
 * sample that ends the wait wakes it, so that the spans after it are short again. */
#define IDLE_INTERVAL_MAX_NS 100000000u


/* The next moment to ask, from @at: one interval on average, drawn uniformly
 * from half to one and a half (xorshift64) so that the samples never lock onto
 * the phase of a training step, which would leave the same part of every step
 * (the optimizer's, just after the backward pass) unsampled. */
static uint64_t next_moment(uint64_t at, uint64_t *random)
{
    uint64_t x = *random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *random = x;
    return at + interval_ns / 2 + x % (interval_ns ? interval_ns : 1);
}

/* How often and how long the sampling thread looks for the interpreter to be running. */
#define FIRST_REQUEST_POLL_NS 1000000u
#define FIRST_REQUEST_POLLS 30000u

static void *sampler_main(void *unused)
{
    (void)unused;
    pi_guard_enter(); /* nothing this thread calls is recorded */
    uint64_t random = pi_clock_ticks() | 1, gap = interval_ns;
    /* the first request as soon as the interpreter runs: that pending call installs the
     * spans (python_spans.h), which must come before the job imports what they mark */
    const struct pi_python *py = pi_python_get();
    int alone = atomic_exchange(&forked, 0) || (py && !py->is_initialized());
    for (unsigned i = 0; py && !py->is_initialized() && i < FIRST_REQUEST_POLLS; i++)
        pi_futex_wait(&sampler_wake, 0, FIRST_REQUEST_POLL_NS);
    request_sample(alone);
    uint64_t next = next_moment(pi_clock_ns(CLOCK_MONOTONIC), &random);
    for (;;) {
        uint64_t now = pi_clock_ns(CLOCK_MONOTONIC);
        uint64_t until = atomic_load_explicit(&backing_off, memory_order_relaxed) ? now + gap : next;
        if (until > now)
            pi_futex_wait(&sampler_wake, 0, until - now);
        now = pi_clock_ns(CLOCK_MONOTONIC);
        if (atomic_exchange_explicit(&sampler_wake, 0, memory_order_relaxed) || now < next) {
            /* the sample that ended a long wait: back to the moments as drawn */
            gap = interval_ns;
            continue;
        }
        while (next <= now)
            next = next_moment(next, &random);
        if (atomic_load_explicit(&requested, memory_order_relaxed)) {
            /* not served since the last moment: the main thread is inside one call */
            gap = gap * 2 < IDLE_INTERVAL_MAX_NS ? gap * 2 : IDLE_INTERVAL_MAX_NS;
            atomic_store_explicit(&backing_off, 1, memory_order_relaxed);
            continue;
        }
        atomic_store_explicit(&backing_off, 0, memory_order_relaxed);
        gap = interval_ns;
        request_sample(0);
    }
    return NULL;
}

/* The interpreter was found (python_runtime.c), or a fork child of a process that sampled. */
static void start_thread(void)
{
    const struct pi_python *py = pi_python_get();
    if (!interval_ns || !py || !pi_python_can_defer(py) ||
        atomic_exchange(&thread_started, 1))
        return;
    int err = pi_background_thread("pi-py-sampler", sampler_main, NULL);
    if (err != 0) {
        pi_diag("no Python time samples: the sampling thread could not start (error %d)", err);
        atomic_store(&thread_started, 0);
    }
}

/* A fork child (a DataLoader worker) samples this many times less often: each
 * wake of the sampling thread costs about 17 us of CPU on a virtual machine,
 * and a worker's main thread mostly waits for its next index; measured on the
 * example job (4 workers' lives), sampling every process at 10 ms made the
 * profiler's threads take 1.97% of the job's CPU instead of 1.22%. */
#define CHILD_INTERVAL_FACTOR 4

static void after_fork(void)
{
    /* the child's interpreter is the parent's, at the same address */
    if (interval_ns < UINT64_MAX / CHILD_INTERVAL_FACTOR)
        interval_ns *= CHILD_INTERVAL_FACTOR;
    atomic_store(&requested, 0);
    last_ticks = 0;
    last_cpu_ns = 0;
    atomic_store(&first_request, 0);
    atomic_store(&main_state, NULL); /* the thread that forked is the child's main thread */
    atomic_store(&forked, 1);
    if (atomic_exchange(&thread_started, 0))
        start_thread();
}

void pi_python_sampler_start(void)
{
    /* summary mode has a default of its own (settings.c) */
    interval_ns = pi_setting_number("PROFINJECT_PY_TIME_MS") * 1000000u;
    if (!interval_ns)
        return;
    pi_process_event_subscribe(PI_EVENT_FORK_CHILD, after_fork);
    pi_python_on_found(start_thread);
    /* a python executable has its C API before it initialises: sample from the first import */
    (void)pi_python_get();
}
