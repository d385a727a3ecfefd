/*
 * lifecycle.c - constructor, destructor and lazy initialisation.
 */
#include "lifecycle.h"

#include "config.h"
#include "guard.h"
#include "real_functions.h"
#include "recorder.h"

__thread int pi_guard_depth __attribute__((tls_model("initial-exec")));
_Atomic int pi_init_complete;
static _Atomic int init_claimed;
static int exit_status = -1;

void pi_init_slow(void)
{
    /* Only one thread sets up; others carry on untraced until it is done
     * (their events are dropped by the recording flag). */
    if (atomic_exchange(&init_claimed, 1))
        return;
    int guard = pi_guard_enter();
    pi_real_resolve();
    struct pi_config config;
    pi_config_from_env(&config);
    if (pi_recorder_start(&config) == 0)
        pi_install_signal_handlers();
    atomic_store_explicit(&pi_init_complete, 1, memory_order_release);
    pi_guard_restore(guard);
}

void pi_note_exit_status(int status)
{
    exit_status = status;
}

__attribute__((constructor(101))) static void pi_constructor(void)
{
    pi_ensure_init();
}

__attribute__((destructor(101))) static void pi_destructor(void)
{
    int guard = pi_guard_enter();
    pi_recorder_stop(PI_END_EXIT, exit_status);
    pi_guard_restore(guard);
}
