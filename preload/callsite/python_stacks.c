/*
 * python_stacks.c - every Python thread's frames on request (see
 * python_stacks.h).
 *
 * A helper thread takes the GIL (PyGILState_Ensure) and asks the
 * interpreter for each thread's current frame (_PyThread_CurrentFrames,
 * what sys._current_frames() returns). With the GIL held no thread moves
 * its frames, so the chains are read whole, and the C API may allocate
 * there as at any point where an extension runs Python. Names come from
 * threading._active (the Thread's _name and _native_id), as the trace's
 * thread names do. The control thread waits for the helper at most the
 * timeout and leaves it behind if the GIL is not had by then (the main
 * thread in a long call that keeps it): the helper ends when it gets it.
 */
#include "python_stacks.h"

#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/background_thread.h"
#include "core/clock.h"
#include "core/guard.h"
#include "core/raw_syscalls.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "profinject/in_flight_words.h"
#include "profinject/python_files.h"
#include "python_capi.h"
#include "python_runtime.h"

#define MAX_FRAMES 64
#define MAX_THREADS 256

/* One request: the text the helper writes, and who lets go of it. */
struct request {
    const struct pi_python_capi *api;
    char *out;
    size_t size, used;
    int cut;
    uint64_t asked_ns, taken_ns, released_ns;
    _Atomic int state; /* RUNNING, then DONE by the helper or ABANDONED by the waiter */
};
enum { RUNNING, DONE, ABANDONED };

static void say(struct request *r, const char *format, ...)
{
    if (r->used + 1 >= r->size) {
        r->cut = 1;
        return;
    }
    va_list args;
    va_start(args, format);
    int n = vsnprintf(r->out + r->used, r->size - r->used, format, args);
    va_end(args);
    if (n < 0)
        return;
    if ((size_t)n >= r->size - r->used) {
        r->used = r->size - 1;
        r->cut = 1;
    } else {
        r->used += (size_t)n;
    }
}

/* @object's attribute @name as UTF-8 into @out ("?" when it has none). */
static void text_of(const struct pi_python_capi *api, void *object, const char *name, char *out, size_t size)
{
    void *value = object ? api->get_attr(object, name) : NULL;
    const char *text = value ? api->as_utf8(value) : NULL;
    snprintf(out, size, "%s", text ? text : "?");
    if (value)
        api->dec_ref(value);
    api->err_clear();
}

static unsigned long number_of(const struct pi_python_capi *api, void *object, const char *name)
{
    void *value = object ? api->get_attr(object, name) : NULL;
    unsigned long n = value ? api->as_unsigned_long(value) : 0;
    if (value)
        api->dec_ref(value);
    api->err_clear();
    return n == (unsigned long)-1 ? 0 : n;
}

static void say_frames(struct request *r, void *frame)
{
    const struct pi_python_capi *api = r->api;
    void *held = NULL; /* the frame we own a reference to */
    for (int n = 0; frame && n < MAX_FRAMES; n++) {
        void *code = api->frame_code(frame);
        char file[512], function[256];
        /* co_qualname from 3.11 ("Files.__getitem__"), co_name before */
        text_of(api, code, "co_qualname", function, sizeof(function));
        if (strcmp(function, "?") == 0)
            text_of(api, code, "co_name", function, sizeof(function));
        text_of(api, code, "co_filename", file, sizeof(file));
        say(r, "    %s:%d in %s\n", pi_python_short_file(file), api->frame_line(frame), function);
        if (code)
            api->dec_ref(code);
        void *back = api->frame_back(frame);
        if (held)
            api->dec_ref(held);
        held = frame = back;
    }
    if (held)
        api->dec_ref(held);
}

/* The threads that run no Python: their tid and kernel name. */
static void say_other_threads(struct request *r, const unsigned long *python_tids, int count)
{
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *e;
    int first = 1;
    while (tasks && (e = readdir(tasks))) {
        unsigned long tid = strtoul(e->d_name, NULL, 10);
        int python = 0;
        for (int i = 0; i < count && !python; i++)
            python = python_tids[i] == tid;
        if (!tid || python)
            continue;
        char path[64], name[32];
        snprintf(path, sizeof(path), "/proc/self/task/%lu/comm", tid);
        if (!pi_sys_read_file(path, name, sizeof(name)))
            snprintf(name, sizeof(name), "?");
        name[strcspn(name, "\n")] = '\0';
        say(r, "%s%s (tid %lu%s)", first ? "threads without Python frames: " : ", ", name, tid,
            pi_background_thread_is_ours((uint32_t)tid) ? ", the profiler's" : "");
        first = 0;
    }
    if (tasks)
        closedir(tasks);
    say(r, first ? "every thread runs Python\n" : "\n");
}

/* The main thread's ident (pthread_self), noted as the library loads there: threading
 * names threads only where the program imported it. */
static unsigned long main_thread;
static int main_thread_known;

__attribute__((constructor)) static void note_main_thread(void)
{
    main_thread_known = pi_sys_gettid() == (uint32_t)getpid();
    if (main_thread_known)
        main_thread = (unsigned long)pthread_self();
}

/* What thread @tid has been blocked in, and for how long, where one of @waits is its. */
static void say_blocked(struct request *r, unsigned long tid, const struct pi_wait_snapshot *waits,
                        int count)
{
    for (int i = 0; i < count; i++) {
        if (waits[i].tid != tid)
            continue;
        char what[96];
        pi_in_flight_words(waits[i].what, what, sizeof(what));
        uint64_t now = pi_clock_ticks();
        double rate = pi_recorder_ticks_per_second();
        double seconds = now > waits[i].since && rate > 0 ? (double)(now - waits[i].since) / rate
                                                          : 0;
        say(r, "  blocked for %.2f s in %s\n", seconds, what);
        return;
    }
}

/* Each thread of @frames ({ident: frame}), the main thread first, with the waits it is in. */
static void say_threads(struct request *r, void *frames, void *active)
{
    static struct pi_wait_snapshot waits[MAX_THREADS]; /* read holding the GIL: one at a time */
    int blocked = pi_waits_in_flight(waits, MAX_THREADS);
    const struct pi_python_capi *api = r->api;
    unsigned long tids[MAX_THREADS];
    int count = 0;
    for (int main_pass = 1; main_pass >= 0; main_pass--) {
        long pos = 0;
        void *ident, *frame;
        while (api->dict_next(frames, &pos, &ident, &frame)) {
            void *thread = active ? api->dict_get(active, ident) : NULL;
            unsigned long tid = number_of(api, thread, "_native_id");
            char name[128];
            text_of(api, thread, "_name", name, sizeof(name));
            if (!thread && main_thread_known && api->as_unsigned_long(ident) == main_thread) {
                /* a program that never imported threading: its main thread is still known */
                tid = (unsigned long)getpid();
                snprintf(name, sizeof(name), "MainThread");
            }
            api->err_clear();
            if ((tid == (unsigned long)getpid()) != main_pass)
                continue;
            if (count < MAX_THREADS)
                tids[count++] = tid;
            say(r, "thread %s (tid %lu):\n", name, tid);
            say_frames(r, frame);
            say_blocked(r, tid, waits, blocked);
        }
    }
    say_other_threads(r, tids, count);
}

static void read_stacks(struct request *r)
{
    const struct pi_python_capi *api = r->api;
    void *frames = api->current_frames();
    void *modules = api->modules();
    void *threading = modules ? api->dict_item(modules, "threading") : NULL;
    void *active = threading ? api->get_attr(threading, "_active") : NULL;
    api->err_clear();
    if (frames)
        say_threads(r, frames, active);
    else
        say(r, "the interpreter gave no frames\n");
    if (active)
        api->dec_ref(active);
    if (frames)
        api->dec_ref(frames);
    api->err_clear();
}

static void *helper(void *arg)
{
    struct request *r = arg;
    pi_guard_enter(); /* its waits for the GIL are not the application's */
    int state = r->api->gil_ensure();
    r->taken_ns = pi_clock_ns(CLOCK_MONOTONIC);
    read_stacks(r);
    r->released_ns = pi_clock_ns(CLOCK_MONOTONIC);
    r->api->gil_release(state);
    int running = RUNNING;
    if (!atomic_compare_exchange_strong(&r->state, &running, DONE)) {
        free(r->out); /* the waiter gave up on it */
        free(r);
    }
    return NULL;
}

size_t pi_python_stacks(char *out, size_t size, int timeout_ms)
{
    const struct pi_python *py = pi_python_get();
    struct request *r = calloc(1, sizeof(*r));
    if (r)
        r->out = malloc(size);
    int running_python = py && py->is_initialized() && !(py->is_finalizing && py->is_finalizing());
    const struct pi_python_capi *api = pi_python_capi(py);
    if (r)
        r->api = api;
    if (!py || !running_python || !r || !r->out || !api || !api->has_frames) {
        /* its threads are still listed, the profiler's said, for their native frames */
        struct request listing = {.out = out, .size = size};
        say(&listing, "%s\n",
            !py ? "no Python interpreter the profiler can read in this process"
            : !r || !r->out ? "out of memory"
            : !running_python ? "its Python interpreter is not running (starting or ending)"
                : "its Python lacks a function this needs (_PyThread_CurrentFrames, "
                  "PyFrame_GetBack: Python 3.9 or later)");
        say_other_threads(&listing, NULL, 0);
        if (r)
            free(r->out);
        free(r);
        return listing.used;
    }
    r->size = size;
    r->asked_ns = pi_clock_ns(CLOCK_MONOTONIC);
    if (pi_background_thread("pi-stacks", helper, r) != 0) {
        free(r->out);
        free(r);
        return (size_t)snprintf(out, size, "could not start a thread to read them\n");
    }
    for (int waited = 0; atomic_load(&r->state) == RUNNING && waited < timeout_ms; waited++) {
        struct timespec ms = {0, 1000000};
        PI_REAL(nanosleep)(&ms, NULL);
    }
    int running = RUNNING;
    if (atomic_compare_exchange_strong(&r->state, &running, ABANDONED))
        return (size_t)snprintf(out, size,
                                "its Python threads were not read: the interpreter's lock (GIL) "
                                "was not free within %d ms (a call that keeps it, or a stopped "
                                "process)\n",
                                timeout_ms);
    int n = snprintf(out, size,
                     "the interpreter's lock taken after %.2f ms and held %.2f ms: its Python "
                     "code paused that long\n",
                     (double)(r->taken_ns - r->asked_ns) / 1e6,
                     (double)(r->released_ns - r->taken_ns) / 1e6);
    size_t at = n > 0 && (size_t)n < size ? (size_t)n : 0;
    size_t body = r->used < size - at ? r->used : size - at - 1;
    memcpy(out + at, r->out, body);
    at += body;
    out[at] = '\0';
    if (r->cut && at + 40 < size)
        at += (size_t)snprintf(out + at, size - at, "(cut: more than %zu bytes)\n", size);
    free(r->out);
    free(r);
    return at;
}
