/*
 * blocked_threads.c - see blocked_threads.h. Runs in the signal handler of
 * the thread that ends the process, after the rest of the trace is out:
 * another thread's frames are read while it stays blocked (its wait still
 * in flight after the walk), and a walk of a thread that returned meanwhile
 * is dropped.
 */
#include "blocked_threads.h"

#include "core/fatal_signals.h"
#include "core/process_events.h"
#include "core/recorder.h"
#include "python_frames.h"
#include "python_runtime.h"
#include "stacks.h"

/* More threads than a training job's ranks keep blocked at once; past it, the first ones. */
#define BLOCKED_MAX 256

static const struct pi_python *interpreter;

/* A blocked thread's Python thread state, while the interpreter runs (not before it starts
 * or while it shuts down, when a state may be half made or freed). */
static void *python_thread(void)
{
    const struct pi_python *py = interpreter;
    return py && py->is_initialized() && !py->is_finalizing() ? py->this_thread_state() : NULL;
}

static void found(void)
{
    interpreter = pi_python_get(); /* found: READY, announced or not */
    if (interpreter && (!interpreter->layout.frame_objects || interpreter->layout.tstate_frame))
        atomic_store(&pi_wait_python_thread, python_thread);
}

static void write_blocked(void)
{
    uint64_t ts;
    int in_profiler;
    void *context;
    if (!pi_fatal_signal_moment(&ts, &in_profiler, &context) || in_profiler)
        return;
    static struct pi_wait_snapshot blocked[BLOCKED_MAX];
    int n = pi_waits_in_flight(blocked, BLOCKED_MAX);
    for (int i = 0; i < n; i++) {
        const struct pi_wait_snapshot *b = &blocked[i];
        uint32_t stack = 0;
        if (interpreter && b->python_thread) {
            struct pi_stack_frame frames[PI_PYTHON_FRAMES_MAX];
            int count = pi_python_frames_of_blocked(interpreter, b->python_thread, frames,
                                                    PI_PYTHON_FRAMES_MAX);
            /* the same wait after the walk, or the frames may be of what came after it */
            if (count > 0 && pi_wait_still(b))
                stack = pi_stack_intern(frames, count, 0);
        }
        uint64_t since = b->since < ts ? b->since : ts;
        pi_emit(PI_REC_WAIT_IN_FLIGHT, 0, since, ts - since,
                b->tid | (uint64_t)b->what << 32, b->object, stack);
    }
}

void pi_blocked_threads_start(void)
{
    pi_process_event_subscribe(PI_EVENT_FATAL_FRAMES, write_blocked);
    pi_python_on_found(found);
}
