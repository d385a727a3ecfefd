/*
 * fatal_site.c - the frames of the thread a fatal signal ends the process
 * from (see fatal_site.h). Runs in the signal handler: nothing is loaded
 * or allocated here (pi_native_walk_signal, from the faulting instruction),
 * and a signal that came in the profiler's own code gets no frames, since
 * the interning it takes could be half done in that very thread.
 */
#include "fatal_site.h"

#include "core/fatal_signals.h"
#include "core/process_events.h"
#include "native_frames.h"
#include "python_frames.h"
#include "python_runtime.h"
#include "stacks.h"

static void fatal_frames(void)
{
    uint64_t ts;
    int in_profiler;
    void *context;
    if (!pi_fatal_signal_moment(&ts, &in_profiler, &context) || in_profiler)
        return;
    void *pcs[PI_NATIVE_FRAMES_MAX];
    int walked = pi_native_walk_signal(context, pcs, PI_NATIVE_FRAMES_MAX);
    uint32_t stack = pi_stack_intern_native(pcs, walked > 0 ? walked : 0);
    const struct pi_python *py = pi_python_ready();
    if (py && pi_python_holds_gil(py)) {
        struct pi_stack_frame frames[PI_PYTHON_FRAMES_MAX];
        int n = pi_python_frames(py, frames, PI_PYTHON_FRAMES_MAX, 0);
        if (n > 0)
            stack = pi_stack_intern(frames, n, stack);
    }
    pi_stack_emit_call_site(PI_REC_FATAL_SIGNAL, 0, 0, ts, 0, stack, 0);
}

void pi_fatal_site_start(void)
{
    pi_process_event_subscribe(PI_EVENT_FATAL_FRAMES, fatal_frames);
    /* on the writer's first flush: a process that lives past it has native frames to give
     * at a fatal signal, and one that ends sooner never pays for loading the unwinder */
    pi_process_event_subscribe(PI_EVENT_SETTLED, pi_native_prepare);
}
