/*
 * library.c - the library's constructor and destructor: the one place that
 * knows every part. The core sets itself up on the first hook or here,
 * whichever comes first (core/lifecycle.c); the parts above it start here
 * and subscribe to the moments of the process they must follow
 * (core/process_events.h).
 */
#include "callsite/blocked_threads.h"
#include "callsite/call_sites.h"
#include "callsite/fatal_site.h"
#include "callsite/native_sampler.h"
#include "callsite/python_sampler.h"
#include "callsite/python_spans.h"
#include "callsite/span_stack.h"
#include "control/attach_bindings.h"
#include "control/control_channel.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/recorder.h"
#include "cuda/live_allocations.h"
#include "host/stderr_tail.h"
#ifdef PI_HAVE_CUDA
#include "control/attach_driver_tables.h"
#include "cuda/entry_points.h"
#include "nccl/nccl_entry_points.h"
#include "blas/blas_entry_points.h"
#endif

__attribute__((constructor(101))) static void pi_constructor(void)
{
#ifdef PI_HAVE_CUDA
    pi_dlsym_register(pi_is_nccl_name, pi_nccl_wrap_symbol);
    pi_dlsym_register(pi_is_blas_name, pi_blas_wrap_symbol);
#endif
    pi_ensure_init();
    if (pi_recorder_state() == PI_STATE_RUNNING) {
        int guard = pi_guard_enter();
        pi_call_sites_start();
        pi_fatal_site_start();
        pi_blocked_threads_start(); /* after the fatal site: its frames come first */
        pi_span_device_bytes_from(pi_live_device_bytes);
        pi_python_sampler_start(); /* its pending calls install the spans too */
        pi_python_spans_start();
        pi_native_sampler_start();
        pi_stderr_tail_start();
        pi_control_start();
        pi_guard_restore(guard);
    }
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
    if (pi_ends_at_exit())
        return;
    int guard = pi_guard_enter();
    pi_recorder_stop(PI_END_EXIT, -1);
    pi_guard_restore(guard);
}
