/* call_sites.c - call sites of allocations, sampled launches and waits (see call_sites.h). */
#include "call_sites.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/diagnostics.h"
#include "core/guard.h"
#include "core/process_events.h"
#include "core/recorder.h"
#include "core/settings.h"
#include "native_frames.h"
#include "python_deferred.h"
#include "python_frames.h"
#include "stacks.h"

__thread int32_t pi_launch_countdown __attribute__((tls_model("initial-exec")));
static __thread uint64_t random_state __attribute__((tls_model("initial-exec")));
static int32_t launch_sample = 100; /* PROFINJECT_PY_SAMPLE; 0: no launch is sampled */

static void after_fork(void)
{
    pi_python_deferred_forget();
    pi_python_forget_announced();
}

void pi_call_sites_start(void)
{
    launch_sample = (int32_t)pi_setting_number("PROFINJECT_PY_SAMPLE");
    pi_process_event_subscribe(PI_EVENT_FORK_CHILD, after_fork);
}

static uint64_t next_random(void)
{
    uint64_t x = random_state ? random_state : (pi_clock_ticks() | 1) ^ pi_current_tid();
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    random_state = x;
    return x;
}

/* ln(@x) for x in (0, 1]: the exponent's part and the mantissa's by the series of atanh (within
 * 1e-6; the library links no libm) */
static double log_of(double x)
{
    union {
        double d;
        uint64_t u;
    } v = {.d = x};
    int exponent = (int)((v.u >> 52) & 0x7ff) - 1023;
    v.u = (v.u & 0xfffffffffffffull) | 0x3ff0000000000000ull; /* the mantissa, in [1, 2) */
    double s = (v.d - 1) / (v.d + 1), s2 = s * s;
    double mantissa = 2 * s * (1 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 / 9))));
    return exponent * 0.6931471805599453 + mantissa;
}

/*
 * The next gap between sampled launches, geometric with mean N: each launch
 * is sampled with probability 1/N, on its own (xorshift64, per thread), so
 * that the launches sampled are a simple random sample of a kernel's, whose
 * error the report can state. A fixed period would keep sampling the same
 * kernel of a loop that launches a multiple of it per iteration; gaps drawn
 * evenly from 1..2N-1 (as before) still sampled a loop's fixed order of
 * launches in correlated places (errors 1.25 times the binomial's). Drawn
 * by inversion, one draw a sampled launch.
 */
static int32_t next_gap(void)
{
    if (launch_sample <= 1)
        return launch_sample == 1 ? 1 : INT32_MAX;
    double u = (double)((next_random() >> 11) + 1) * 0x1p-53; /* in (0, 1] */
    double gap = 1 + log_of(u) / log_of(1 - 1.0 / launch_sample);
    double most = 64.0 * launch_sample;
    return (int32_t)(gap < most ? gap : most);
}

/* The Python frames of this thread, read now when it holds the GIL. */
static int frames_now(const struct pi_python *py, struct pi_stack_frame *frames)
{
    return pi_python_holds_gil(py) ? pi_python_frames(py, frames, PI_PYTHON_FRAMES_MAX, 0) : 0;
}

uint32_t pi_call_site_alloc(uint16_t flags, uint64_t ts, uint64_t pointer)
{
    int saved = errno;
    int guard = pi_guard_enter();
    void *pcs[PI_NATIVE_FRAMES_MAX];
    uint32_t native = pi_stack_intern_native(pcs, pi_native_walk(pcs, PI_NATIVE_FRAMES_MAX));
    uint32_t stack = native;
    const struct pi_python *py = pi_python_get();
    if (py) {
        struct pi_stack_frame frames[PI_PYTHON_FRAMES_MAX];
        int n = frames_now(py, frames);
        if (n > 0) {
            stack = pi_stack_intern(frames, n, native);
        } else {
            struct pi_deferred_call call = {PI_REC_GPU_ALLOC, flags, 0, ts, pointer, native};
            pi_python_defer(py, &call);
        }
    }
    pi_guard_restore(guard);
    errno = saved;
    return stack;
}

/* A call site with Python frames only: now, or at the next safe point. Returns whether it
 * will have them. */
static int python_site(uint16_t kind, uint16_t flags, unsigned detail, uint64_t ts, uint64_t key)
{
    const struct pi_python *py = pi_python_get();
    if (!py)
        return 0;
    struct pi_stack_frame frames[PI_PYTHON_FRAMES_MAX];
    int n = frames_now(py, frames);
    if (n > 0) {
        pi_stack_emit_call_site(kind, flags, detail, ts, key, pi_stack_intern(frames, n, 0), 0);
        return 1;
    }
    struct pi_deferred_call call = {kind, flags, detail, ts, key, 0};
    return pi_python_defer(py, &call);
}

/*
 * A sampled launch of a Python process's thread that has no Python frames
 * to give, other than its main thread (whose frames a full queue only
 * delayed): autograd's engine threads, which launch the whole backward
 * pass. Its native frames name the autograd node being applied
 * (torch::autograd::generated::MmBackward0::apply). The walk costs some
 * microseconds, so sampled launches only, and deep enough to reach the
 * node from cuBLAS through ATen's dispatcher.
 */
static void native_launch_site(uint16_t flags, uint64_t ts, uint32_t kernel)
{
    if (!pi_python_get() || pi_current_tid() == (uint32_t)pi_recorder_pid())
        return;
    void *pcs[PI_NATIVE_SAMPLE_FRAMES_MAX];
    uint32_t stack = pi_stack_intern_launch(pcs, pi_native_walk(pcs, PI_NATIVE_SAMPLE_FRAMES_MAX));
    pi_stack_emit_call_site(PI_REC_GPU_LAUNCH, flags, 0, ts, kernel, stack, PI_CALL_SITE_NATIVE);
}

void pi_call_site_launch(uint16_t flags, uint64_t ts, uint32_t kernel)
{
    int saved = errno;
    int guard = pi_guard_enter();
    int first = random_state == 0;
    pi_launch_countdown = next_gap();
    /* a thread's first launch only starts its countdown, so that every
     * thread does not sample its first launch */
    if ((!first || launch_sample == 1) && !python_site(PI_REC_GPU_LAUNCH, flags, 0, ts, kernel))
        native_launch_site(flags, ts, kernel);
    pi_guard_restore(guard);
    errno = saved;
}

void pi_call_site_wait(uint16_t kind, uint16_t flags, unsigned detail, uint64_t ts,
                       uint64_t duration)
{
    /* the training loop's thread: other threads' waits are no data waits */
    if (pi_current_tid() != (uint32_t)pi_recorder_pid())
        return;
    int saved = errno;
    int guard = pi_guard_enter();
    python_site(kind, flags, detail, ts, duration);
    pi_guard_restore(guard);
    errno = saved;
}
