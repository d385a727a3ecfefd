/*
 * gpu_timing.c - GPU-side durations: the choice of source and what each
 * hook does with it (see gpu_timing.h). CUPTI costs a launch three stores
 * into its thread's ring; event pairs two event records.
 */
#include "gpu_timing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <limits.h>

#include "call_ring.h"
#include "core/background_thread.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/loaded_symbols.h"
#include "core/process_events.h"
#include "core/raw_syscalls.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "core/settings.h"
#include "cupti_api.h"
#include "cupti_source.h"
#include "event_pairs.h"

#define RESOLVE_PERIOD_NS 2000000l /* event pairs: resolve every 2 ms */
#define FLUSH_PERIOD_NS 50000000l  /* CUPTI: hand over finished records every 50 ms */
/* The first launch may come before the runtime has loaded the driver:
 * wait this many launches for libcuda.so.1 before deciding without it. */
#define LAUNCHES_BEFORE_DRIVER 1000

static _Atomic int decided;
static pthread_mutex_t choice_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned undecided_launches;
static _Atomic int source = PI_GPU_TIMING_ABSENT;
static _Atomic int cupti_paused; /* no window open: CUPTI records nothing */
static int events_usable, thread_running;
/* PROFINJECT_TEST_LAUNCH_DELAY_NS: each timed call spins this long first, so
 * that tools/gpu-check can tell a program that reacts to slower launches
 * from one that reacts to the CUDA calls GPU timing makes */
static uint64_t test_delay_ticks;
/* decided, absent and no test delay: the hooks' inline test (gpu_timing.h) */
_Atomic int pi_gpu_timing_idle;

/* After every change of source or decision: the flag the hot path reads. */
static void update_idle(void)
{
    atomic_store(&pi_gpu_timing_idle, atomic_load(&decided) &&
                                          atomic_load(&source) == PI_GPU_TIMING_ABSENT &&
                                          test_delay_ticks == 0);
}

static void emit_choice(int chosen, uint64_t code, const char *reason)
{
    int guard = pi_guard_enter();
    uint32_t id = pi_intern_cstr(reason);
    pi_guard_restore(guard);
    pi_emit(PI_REC_GPU_TIMING, 0, pi_clock_ticks(), 0, (uint64_t)chosen, code, id);
}

/* The resolver (event pairs) and flusher (CUPTI), in one thread of ours. */
static void *timing_thread(void *unused)
{
    (void)unused;
    pi_guard_enter(); /* our CUDA calls are not the application's */
    for (;;) {
        int cupti = atomic_load(&source) == PI_GPU_TIMING_CUPTI;
        pi_sys_sleep(cupti ? FLUSH_PERIOD_NS : RESOLVE_PERIOD_NS);
        if (atomic_load(&source) == PI_GPU_TIMING_CUPTI && !atomic_load(&cupti_paused))
            pi_cupti_flush(0);
        else if (atomic_load(&source) == PI_GPU_TIMING_EVENTS)
            pi_event_pairs_resolve();
    }
    return NULL;
}

static int start_thread(void)
{
    if (!thread_running)
        thread_running = pi_background_thread("pi-gpu-timing", timing_thread, NULL) == 0;
    return thread_running ? 0 : -1;
}

/* Before libcupti's and the runtime's own exit handlers run (atexit order is
 * the reverse of registration), so CUPTI can still hand its records over. */
static void at_exit(void)
{
    pi_gpu_timing_drain();
}

static void choose(void)
{
    int guard = pi_guard_enter();
    const char *mode = pi_setting_choice("PROFINJECT_GPU_TIMING");
    pi_event_pairs_sample((unsigned)pi_setting_number("PROFINJECT_GPU_SAMPLE"));
    uint64_t delay = pi_setting_number("PROFINJECT_TEST_LAUNCH_DELAY_NS");
    test_delay_ticks = (uint64_t)((double)delay * pi_recorder_ticks_per_second() / 1e9);
    if (strcmp(mode, "off") == 0) {
        emit_choice(PI_GPU_TIMING_ABSENT, 0, "GPU timing turned off (PROFINJECT_GPU_TIMING=off)");
        pi_guard_restore(guard);
        return;
    }
    char reason[400];
    int events_only = strcmp(mode, "events") == 0;
    int cupti = events_only ? -1 : pi_cupti_start(reason, sizeof(reason));
    if (events_only)
        snprintf(reason, sizeof(reason), "event pairs asked for (PROFINJECT_GPU_TIMING=events)");
    events_usable = pi_event_pairs_load() == 0;
    int chosen = cupti == 0 ? PI_GPU_TIMING_CUPTI
                 : events_usable ? PI_GPU_TIMING_EVENTS
                                 : PI_GPU_TIMING_ABSENT;
    if (chosen != PI_GPU_TIMING_ABSENT && start_thread() != 0) {
        if (cupti == 0)
            pi_cupti_stop();
        snprintf(reason, sizeof(reason), "cannot start the GPU timing thread");
        chosen = PI_GPU_TIMING_ABSENT;
    } else if (chosen == PI_GPU_TIMING_ABSENT) {
        char why_not_cupti[sizeof(reason)];
        snprintf(why_not_cupti, sizeof(why_not_cupti), "%s", reason);
        snprintf(reason, sizeof(reason), "no usable CUDA driver (libcuda.so.1 event API not found); %.300s",
                 why_not_cupti);
    }
    atomic_store(&source, chosen);
    emit_choice(chosen, (uint64_t)(int64_t)cupti, reason);
    if (chosen != PI_GPU_TIMING_ABSENT)
        atexit(at_exit);
    pi_guard_restore(guard);
}

static void window_closing(void)
{
    if (atomic_load(&source) == PI_GPU_TIMING_CUPTI) {
        PI_REAL(pthread_mutex_lock)(&choice_lock);
        pi_cupti_pause();
        atomic_store(&cupti_paused, 1);
        pthread_mutex_unlock(&choice_lock);
    } else if (atomic_load(&source) == PI_GPU_TIMING_EVENTS) {
        pi_event_pairs_close();
    }
}

/* Decide the source once the driver is there (or has long not come). */
static void decide(void)
{
    PI_REAL(pthread_mutex_lock)(&choice_lock);
    if (!atomic_load(&decided)) {
        /* from the first launch on, the end, an exec, a window closing and a fork child concern us */
        pi_process_event_subscribe(PI_EVENT_END, pi_gpu_timing_drain);
        pi_process_event_subscribe(PI_EVENT_BEFORE_EXEC, pi_gpu_timing_drain);
        pi_process_event_subscribe(PI_EVENT_WINDOW_CLOSING, window_closing);
        pi_process_event_subscribe(PI_EVENT_FORK_CHILD, pi_gpu_timing_after_fork);
        int guard = pi_guard_enter();
        void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        pi_guard_restore(guard);
        if (driver || ++undecided_launches >= LAUNCHES_BEFORE_DRIVER) {
            choose();
            atomic_store(&decided, 1);
            update_idle();
        }
        if (driver)
            dlclose(driver);
    }
    pthread_mutex_unlock(&choice_lock);
}

static void resume_cupti(void)
{
    PI_REAL(pthread_mutex_lock)(&choice_lock);
    if (atomic_load(&cupti_paused)) {
        pi_cupti_resume();
        atomic_store(&cupti_paused, 0);
    }
    pthread_mutex_unlock(&choice_lock);
}

void pi_gpu_timing_start_busy(struct pi_gpu_pair *pair, const void *stream,
                              int per_thread_stream, uint64_t host_start)
{
    pair->stream = stream;
    pair->per_thread_stream = per_thread_stream;
    if (__builtin_expect(!atomic_load_explicit(&decided, memory_order_acquire), 0))
        decide();
    if (__builtin_expect(test_delay_ticks != 0, 0))
        while (pi_clock_ticks() - host_start < test_delay_ticks)
            ;
    int s = atomic_load_explicit(&source, memory_order_relaxed);
    if (s == PI_GPU_TIMING_CUPTI) {
        if (__builtin_expect(atomic_load_explicit(&cupti_paused, memory_order_relaxed), 0))
            resume_cupti();
    } else if (s == PI_GPU_TIMING_EVENTS) {
        pi_event_pairs_start(pair);
    }
}

void pi_gpu_timing_finish_busy(struct pi_gpu_pair *pair, uint64_t correlation, int failed,
                               uint64_t host_end)
{
    if (atomic_load_explicit(&source, memory_order_relaxed) == PI_GPU_TIMING_CUPTI) {
        if (!failed)
            pi_call_ring_note(pair->host_start, host_end, correlation);
    } else if (pair->start_event) {
        pi_event_pairs_finish(pair, correlation, failed);
    }
}

void pi_gpu_timing_drain(void)
{
    PI_REAL(pthread_mutex_lock)(&choice_lock);
    /* launches happened but no driver ever came: say so before the trace closes */
    if (!atomic_load(&decided) && undecided_launches > 0) {
        choose();
        atomic_store(&decided, 1);
    }
    int guard = pi_guard_enter();
    if (atomic_load(&source) == PI_GPU_TIMING_CUPTI) {
        pi_cupti_stop(); /* exit or exec: the session ends here */
        atomic_store(&source, PI_GPU_TIMING_ABSENT);
    } else if (atomic_load(&source) == PI_GPU_TIMING_EVENTS) {
        pi_event_pairs_close();
    }
    update_idle();
    pi_guard_restore(guard);
    pthread_mutex_unlock(&choice_lock);
}

/* @path, made absolute and canonical when it can be */
static void canonical(const char *path, char *out, size_t size)
{
    char resolved[PATH_MAX];
    const char *best = realpath(path, resolved) ? resolved : path;
    size_t length = strnlen(best, size - 1);
    memcpy(out, best, length);
    out[length] = '\0';
}

void pi_gpu_timing_no_device(int error, const void *runtime_function)
{
    PI_REAL(pthread_mutex_lock)(&choice_lock);
    if (!atomic_load(&decided)) {
        int guard = pi_guard_enter();
        char runtime[1024] = "not found", cupti[1200], reason[2600];
        Dl_info info;
        if (dladdr(runtime_function, &info) && info.dli_fname)
            canonical(info.dli_fname, runtime, sizeof(runtime));
        pi_cupti_locate(runtime, cupti, sizeof(cupti));
        const char *(*error_name)(int) = (const char *(*)(int))pi_loaded_symbol("cudaGetErrorName");
        const char *name = error_name ? error_name(error) : NULL;
        snprintf(reason, sizeof(reason),
                 "no usable CUDA device or driver (cudaGetDeviceCount: %s = %d): no GPU time, "
                 "CUPTI not started; runtime %s; CUPTI %s",
                 name ? name : "error", error, runtime, cupti);
        atomic_store(&source, PI_GPU_TIMING_ABSENT);
        emit_choice(PI_GPU_TIMING_ABSENT, (uint64_t)(int64_t)error, reason);
        atomic_store(&decided, 1);
        update_idle();
        pi_guard_restore(guard);
    }
    pthread_mutex_unlock(&choice_lock);
}

void pi_gpu_timing_yield_cupti(const char *what)
{
    /* a CUPTI call made from inside the profiler (libcupti calling itself) is our own */
    if (pi_guarded())
        return;
    pi_ensure_init();
    PI_REAL(pthread_mutex_lock)(&choice_lock);
    pi_cupti_note_client(what); /* a choice still to come will not take CUPTI */
    if (atomic_load(&source) == PI_GPU_TIMING_CUPTI) {
        int guard = pi_guard_enter();
        pi_cupti_stop();
        pi_guard_restore(guard);
        int next = events_usable ? PI_GPU_TIMING_EVENTS : PI_GPU_TIMING_ABSENT;
        atomic_store(&source, next);
        atomic_store(&cupti_paused, 0);
        char reason[200];
        snprintf(reason, sizeof(reason), "CUPTI handed over to another client (it called %s); %s",
                 what, events_usable ? "event pairs from here on" : "no GPU time from here on");
        emit_choice(next, 0, reason);
        update_idle();
    }
    pthread_mutex_unlock(&choice_lock);
}

void pi_gpu_timing_after_fork(void)
{
    /* CUDA cannot be used in a fork child; its launches go untimed */
    atomic_store(&source, PI_GPU_TIMING_ABSENT);
    update_idle();
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    choice_lock = fresh;
    thread_running = 0;
    pi_cupti_after_fork();
    pi_event_pairs_after_fork();
    pi_call_ring_after_fork();
}
