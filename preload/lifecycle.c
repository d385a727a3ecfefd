/*
 * lifecycle.c - constructor, destructor and lazy initialisation.
 */
#include "lifecycle.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "control/attach_bindings.h"
#include "control/attach_driver_tables.h"
#include "control/control_channel.h"

#include "core/config.h"
#include "core/guard.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#ifdef PI_HAVE_CUDA
#include "cuda/gpu_timing.h"
#endif

__thread int pi_guard_depth __attribute__((tls_model("initial-exec")));
_Atomic int pi_init_complete;
static _Atomic int init_claimed;
static int ends_at_exit;

/*
 * The end of the trace is written from an on_exit handler: it sees the
 * status whether exit() was called or main returned, and because it is
 * registered from a constructor, before libc registers the destructor
 * pass, it runs after every other library's destructors and atexit
 * handlers, so their calls are still traced.
 */
static void end_at_exit(int status, void *unused)
{
    (void)unused;
#ifdef PI_HAVE_CUDA
    pi_gpu_timing_drain();
#endif
    int guard = pi_guard_enter();
    pi_control_stop();
    pi_recorder_stop(PI_END_EXIT, status);
    pi_guard_restore(guard);
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
    if (pi_recorder_start(&config) == 0) {
        pi_install_signal_handlers();
        ends_at_exit = on_exit(end_at_exit, NULL) == 0;
        /* started paused (profinject run --paused): hooks see one flag until a window opens */
        const char *paused = getenv("PROFINJECT_PAUSED");
        if (paused && *paused && strcmp(paused, "0") != 0)
            atomic_store(&pi_recording, 0);
        pi_control_start();
    }
    atomic_store_explicit(&pi_init_complete, 1, memory_order_release);
    pi_guard_restore(guard);
}

__attribute__((constructor(101))) static void pi_constructor(void)
{
    pi_ensure_init();
    /* loaded into a running process: its calls are already bound elsewhere */
    if (pi_attach_requested()) {
        pi_attach_bind();
#ifdef PI_HAVE_CUDA
        pi_attach_driver_tables();
#endif
    }
}

/* Only when no on_exit handler will do it (the library is being unloaded). */
__attribute__((destructor(101))) static void pi_destructor(void)
{
    if (ends_at_exit)
        return;
    int guard = pi_guard_enter();
    pi_recorder_stop(PI_END_EXIT, -1);
    pi_guard_restore(guard);
}
