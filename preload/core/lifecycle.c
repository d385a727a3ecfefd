/*
 * lifecycle.c - lazy set-up of the core and the end of the trace.
 */
#include "lifecycle.h"
#include "output_handoff.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "fatal_signals.h"
#include "guard.h"
#include "process_events.h"
#include "real_functions.h"
#include "recorder.h"
#include "settings.h"
#include "thread_cpu_edges.h"

_Atomic int pi_init_complete;
static _Atomic int init_claimed;
static int ends_at_exit;

void pi_process_end(int reason, int status)
{
    int guard = pi_guard_enter();
    pi_process_event_notify(PI_EVENT_END);
    pi_recorder_stop(reason, status);
    pi_guard_restore(guard);
}

/*
 * The end of the trace is written from an on_exit handler: it sees the
 * status whether exit() was called or main returned, and because it is
 * registered during the constructors, before libc registers the destructor
 * pass, it runs after every other library's destructors and atexit
 * handlers, so their calls are still traced.
 */
static void end_at_exit(int status, void *unused)
{
    (void)unused;
    pi_process_end(PI_END_EXIT, status);
}

int pi_ends_at_exit(void)
{
    return ends_at_exit;
}

void pi_init_slow(void)
{
    /* Only one thread sets up; others wait for it, briefly. */
    if (atomic_exchange(&init_claimed, 1)) {
        if (pi_guarded())
            return; /* a hook reached from our own set-up: it passes through */
        while (!atomic_load_explicit(&pi_init_complete, memory_order_acquire))
            sched_yield(); /* another thread is setting up; the real functions come next */
        return;
    }
    int guard = pi_guard_enter();
    pi_real_resolve();
    struct pi_config config;
    pi_config_from_env(&config);
    if (pi_output_handoff_take(&config) != 0)
        config.disabled = 1; /* never into the container's own files instead */
    if (pi_recorder_start(&config) == 0) {
        pi_fatal_signals_install();
        ends_at_exit = on_exit(end_at_exit, NULL) == 0;
        /* started paused (profinject run --paused): hooks see one flag until a window opens */
        pi_settings_check_environment();
        if (pi_setting_flag("PROFINJECT_PAUSED") && !config.summary) /* summaries never pause */
            atomic_store(&pi_recording, 0);
        /* started after the recording of `run --duration` ended: nothing to record */
        uint64_t until = pi_record_until_ns();
        if (until && pi_clock_ns(CLOCK_MONOTONIC) >= until && !config.summary)
            atomic_store(&pi_recording, 0); /* summary mode: summaries go on */
        /* loaded by attach: the threads ran before the trace began */
        if (pi_setting_flag("PROFINJECT_ATTACHED") && atomic_load(&pi_recording))
            pi_thread_cpu_edges(pi_clock_ticks(), PI_THREAD_CPU_OPENING);
    }
    atomic_store_explicit(&pi_init_complete, 1, memory_order_release);
    pi_guard_restore(guard);
}
