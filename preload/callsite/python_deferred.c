/*
 * python_deferred.c - the main thread's calls made without the GIL, given
 * their Python frames at its next safe point (see python_deferred.h).
 *
 * The queue belongs to the thread that runs pending calls: it fills it in
 * its hooks and empties it in the pending call, so the flag around it is
 * only ever contended by a thread that is not that one yet thinks it might
 * be (before the first pending call has shown which thread runs them);
 * hooks then give up rather than wait, and only the pending call waits,
 * for the few instructions a hook holds it.
 */
#include "python_deferred.h"

#include <errno.h>
#include <stdatomic.h>

#include "core/guard.h"
#include "core/recorder.h"
#include "python_frames.h"
#include "stacks.h"

#define QUEUE_MAX 64

static struct {
    atomic_flag busy;
    unsigned count;
    uint32_t tid[QUEUE_MAX];
    struct pi_deferred_call calls[QUEUE_MAX];
} queue = {ATOMIC_FLAG_INIT, 0, {0}, {{0}}};

/* A pending call is on its way: further calls join the queue without asking again. */
static _Atomic int requested;

/* The thread the interpreter ran our pending call in; 0 until it has. */
static _Atomic uint32_t pending_call_thread;

/* Before any pending call ran, assume the process's first thread runs them
 * (python runs its script there); the first run says for sure. */
static int runs_pending_calls(uint32_t tid)
{
    uint32_t known = atomic_load_explicit(&pending_call_thread, memory_order_relaxed);
    return known ? known == tid : tid == (uint32_t)pi_recorder_pid();
}

static void lock_queue(void)
{
    while (atomic_flag_test_and_set_explicit(&queue.busy, memory_order_acquire))
        ;
}

static void unlock_queue(void)
{
    atomic_flag_clear_explicit(&queue.busy, memory_order_release);
}

/*
 * The pending call: the interpreter runs it in its main thread, holding
 * the GIL, between two bytecodes. It must return 0 (non-zero means "an
 * exception is set") and must not raise, so nothing here can fail loudly.
 */
static int at_safe_point(void *unused)
{
    (void)unused;
    int saved = errno;
    int guard = pi_guard_enter();
    uint32_t tid = pi_current_tid();
    atomic_store_explicit(&pending_call_thread, tid, memory_order_relaxed);
    struct pi_deferred_call calls[QUEUE_MAX];
    uint32_t tids[QUEUE_MAX];
    lock_queue();
    unsigned count = queue.count;
    for (unsigned i = 0; i < count; i++) {
        calls[i] = queue.calls[i];
        tids[i] = queue.tid[i];
    }
    queue.count = 0;
    unlock_queue();
    atomic_store_explicit(&requested, 0, memory_order_relaxed);
    const struct pi_python *py = pi_python_get();
    if (count && py && atomic_load_explicit(&pi_recording, memory_order_relaxed) &&
        pi_python_holds_gil(py)) {
        struct pi_stack_frame frames[PI_PYTHON_FRAMES_MAX];
        int n = pi_python_frames(py, frames, PI_PYTHON_FRAMES_MAX, 1);
        /* calls of another thread (queued before the right thread was known) have other frames */
        for (unsigned i = 0; n > 0 && i < count; i++)
            if (tids[i] == tid)
                pi_stack_emit_call_site(calls[i].kind, calls[i].flags, calls[i].detail, calls[i].ts,
                                        calls[i].key, pi_stack_intern(frames, n, calls[i].native),
                                        PI_CALL_SITE_DEFERRED);
    }
    pi_guard_restore(guard);
    errno = saved;
    return 0;
}

int pi_python_defer(const struct pi_python *py, const struct pi_deferred_call *call)
{
    if (!pi_python_can_defer(py))
        return 0;
    uint32_t tid = pi_current_tid();
    /* Only the main thread defers, so it cannot be finalizing meanwhile:
     * finalization runs in that same thread. A thread with no thread state
     * runs no Python code. */
    if (!runs_pending_calls(tid) || !py->is_initialized() || py->is_finalizing() ||
        !py->this_thread_state())
        return 0;
    /* A thread holding the GIL had its frames read already: none means no Python site
     * (the interpreter before its first frame). It may also be inside the interpreter's
     * own pending calls, whose lock it just took in the wait being recorded: asking for
     * another call there waits on that lock forever (Py_MakePendingCalls before a script
     * runs did so, on a wait of 20 us or more). */
    if (pi_python_holds_gil(py))
        return 0;
    if (atomic_flag_test_and_set_explicit(&queue.busy, memory_order_acquire))
        return 0;
    int queued = queue.count < QUEUE_MAX;
    if (queued) {
        queue.tid[queue.count] = tid;
        queue.calls[queue.count++] = *call;
    }
    unlock_queue();
    /* -1: the interpreter's own queue is full; the next call asks again */
    if (queued && !atomic_exchange_explicit(&requested, 1, memory_order_relaxed) &&
        py->add_pending_call(at_safe_point, NULL) != 0)
        atomic_store_explicit(&requested, 0, memory_order_relaxed);
    return queued;
}

void pi_python_deferred_forget(void)
{
    /* only the forking thread runs in the child: the flag may be held by a thread that is gone */
    atomic_flag_clear(&queue.busy);
    queue.count = 0;
    atomic_store(&requested, 0);
    atomic_store(&pending_call_thread, 0);
}
