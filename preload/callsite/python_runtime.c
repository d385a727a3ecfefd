/*
 * python_runtime.c - finding the interpreter, its version and its frame
 * layout (see python_runtime.h for what is read and why).
 */
#include "python_runtime.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/diagnostics.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "core/settings.h"

enum state { UNKNOWN, PROBING, ABSENT, READY, UNUSABLE };

static _Atomic int state = UNKNOWN;
static uint64_t next_probe; /* ticks; while ABSENT */
static struct pi_python python;
static _Atomic int announced;  /* PI_REC_PYTHON written to this process's file */
#define ON_FOUND_MAX 4
static void (*_Atomic on_found[ON_FOUND_MAX])(void); /* pi_python_on_found */
static unsigned announce_mode; /* enum pi_python_frames */
static char announce_reason[200];

/*
 * Offsets from each version's headers: PyFrameObject (frameobject.h, public
 * before 3.11), PyThreadState, _PyCFrame and _PyInterpreterFrame
 * (cpython/pystate.h, internal/pycore_frame.h) and PyCodeObject
 * (cpython/code.h), for 64-bit builds (LP64: checked on x86-64) without
 * Py_TRACE_REFS. Patch releases keep them (3.11.2 and 3.11.7 agree); 3.13
 * publishes them in _PyRuntime.debug_offsets, which is read instead.
 * One version per entry: kept out of the formatter's line breaking.
 */
/* clang-format off */
static const struct {
    unsigned minor;
    struct pi_python_layout layout;
} layouts[] = {
    {8, {.frame_objects = 1, .tstate_frame = 24, .frame_back = 24, .frame_code = 32,
         .frame_lasti = 104, .code_filename = 104, .code_name = 112}},
    {9, {.frame_objects = 1, .tstate_frame = 24, .frame_back = 24, .frame_code = 32,
         .frame_lasti = 104, .code_filename = 104, .code_name = 112, .interp_eval_breaker = 72,
         .interp_recursion_limit = 64, .interp_calls_to_do = 88}},
    {10, {.frame_objects = 1, .tstate_frame = 24, .frame_back = 24, .frame_code = 32,
          .frame_lasti = 96, .code_filename = 104, .code_name = 112, .interp_eval_breaker = 68,
          .interp_recursion_limit = 64, .interp_calls_to_do = 88}},
    {11, {.tstate_cframe = 56, .cframe_current = 8, .frame_back = 48, .frame_code = 32,
          .frame_instr = 56, .frame_owner = 69, .code_filename = 112, .code_name = 128,
          .code_adaptive = 184, .code_firsttraceable = 168, .interp_eval_breaker = 100,
          .interp_recursion_limit = 96, .interp_calls_to_do = 120}},
    {12, {.tstate_cframe = 56, .cframe_current = 0, .frame_back = 8, .frame_code = 0,
          .frame_instr = 56, .frame_owner = 70, .code_filename = 112, .code_name = 128,
          .code_adaptive = 192, .code_firsttraceable = 176, .interp_eval_breaker = 368,
          .interp_recursion_limit = 376, .runtime_calls_to_do = 2032}},
    {13, {.tstate_current = 72, .frame_back = 8, .frame_code = 0, .frame_instr = 56,
          .frame_owner = 70, .code_filename = 112, .code_name = 128, .code_adaptive = 200,
          .code_firsttraceable = 184}},
};
/* clang-format on */

/* 3.13's struct _Py_DebugOffsets (internal/pycore_runtime.h): where the
 * fields used here sit in it. The struct is fixed within a minor version. */
enum {
    DEBUG_VERSION = 8,
    DEBUG_TSTATE_CURRENT_FRAME = 184,
    DEBUG_FRAME_PREVIOUS = 232,
    DEBUG_FRAME_EXECUTABLE = 240,
    DEBUG_FRAME_INSTR_PTR = 248,
    DEBUG_FRAME_OWNER = 264,
    DEBUG_CODE_FILENAME = 280,
    DEBUG_CODE_QUALNAME = 296,
    DEBUG_CODE_ADAPTIVE = 344,
};

struct library_search {
    void *handle;
};

static int find_libpython(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct library_search *search = data;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || strncmp(base, "libpython3.", 11) != 0)
        return 0;
    search->handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    return search->handle != NULL;
}

/* Where the interpreter's symbols are: the global scope (python itself, or
 * a libpython it needs), else a libpython loaded with RTLD_LOCAL.
 * Return: 0 when there is none (RTLD_DEFAULT is a null pointer). */
static int interpreter_handle(void **handle)
{
    *handle = RTLD_DEFAULT;
    if (pi_dlsym(RTLD_DEFAULT, "Py_IsInitialized"))
        return 1;
    struct library_search search = {NULL};
    dl_iterate_phdr(find_libpython, &search);
    *handle = search.handle; /* kept open: the functions must stay */
    return search.handle != NULL;
}

static unsigned parse_version(const char *text)
{
    unsigned major = 0, minor = 0, micro = 0;
    if (!text || sscanf(text, "%u.%u.%u", &major, &minor, &micro) < 2)
        return 0;
    return (major << 24) | (minor << 16) | (micro << 8) | 0xf0;
}

static int unusable(const char *why)
{
    snprintf(announce_reason, sizeof(announce_reason), "%s", why);
    announce_mode = PI_PYTHON_FRAMES_OFF;
    return UNUSABLE;
}

/* 3.13: the offsets the interpreter publishes, checked against its cookie. */
static int read_debug_offsets(void *handle, struct pi_python_layout *layout)
{
    const char *runtime = pi_dlsym(handle, "_PyRuntime");
    if (!runtime || memcmp(runtime, "xdebugpy", 8) != 0)
        return -1;
    uint64_t version;
    memcpy(&version, runtime + DEBUG_VERSION, sizeof(version));
    if ((version >> 16) != (python.version >> 16))
        return -1;
#define DEBUG_FIELD(offset) (*(const uint64_t *)(runtime + (offset)))
    struct pi_python_layout published = *layout;
    published.tstate_current = DEBUG_FIELD(DEBUG_TSTATE_CURRENT_FRAME);
    published.frame_back = DEBUG_FIELD(DEBUG_FRAME_PREVIOUS);
    published.frame_code = DEBUG_FIELD(DEBUG_FRAME_EXECUTABLE);
    published.frame_instr = DEBUG_FIELD(DEBUG_FRAME_INSTR_PTR);
    published.frame_owner = DEBUG_FIELD(DEBUG_FRAME_OWNER);
    published.code_filename = DEBUG_FIELD(DEBUG_CODE_FILENAME);
    published.code_name = DEBUG_FIELD(DEBUG_CODE_QUALNAME);
    published.code_adaptive = DEBUG_FIELD(DEBUG_CODE_ADAPTIVE);
#undef DEBUG_FIELD
    /* _co_firsttraceable is not published: trust the header's offset only
     * while the published ones agree with the headers this was built from */
    if (memcmp(&published, layout, sizeof(published)) != 0)
        published.code_firsttraceable = 0;
    *layout = published;
    return 0;
}

#define LOOK_UP(field, name) (*(void **)&python.field = pi_dlsym(handle, name))

static int resolve(void)
{
    int frames_off = !pi_setting_flag("PROFINJECT_PY_FRAMES");
    void *handle;
    if (!interpreter_handle(&handle))
        return ABSENT;
    python.handle = handle;
    const char *(*get_version)(void) = (const char *(*)(void))pi_dlsym(handle, "Py_GetVersion");
    const char *version = get_version ? get_version() : NULL;
    python.version = parse_version(version);
    if (frames_off)
        return unusable("PROFINJECT_PY_FRAMES=0");
    if (version && strstr(version, "free-threading"))
        return unusable("a free-threaded build: its objects have another layout");
    unsigned minor = (python.version >> 16) & 0xff, found = 0;
    for (size_t i = 0; python.version >> 24 == 3 && i < sizeof(layouts) / sizeof(layouts[0]); i++)
        if (layouts[i].minor == minor) {
            python.layout = layouts[i].layout;
            found = 1;
        }
    if (!found)
        return unusable("only Python 3.8 to 3.13 are known");
    if (minor >= 13 && read_debug_offsets(handle, &python.layout) != 0)
        return unusable("_PyRuntime.debug_offsets not found or not of this version");
    LOOK_UP(is_initialized, "Py_IsInitialized");
    LOOK_UP(is_finalizing, minor >= 13 ? "Py_IsFinalizing" : "_Py_IsFinalizing");
    LOOK_UP(gil_check, "PyGILState_Check");
    LOOK_UP(current_thread_state,
            minor >= 13 ? "PyThreadState_GetUnchecked" : "_PyThreadState_UncheckedGet");
    LOOK_UP(this_thread_state, "PyGILState_GetThisThreadState");
    LOOK_UP(add_pending_call, "Py_AddPendingCall");
    LOOK_UP(main_interpreter, "PyInterpreterState_Main");
    python.runtime = pi_dlsym(handle, "_PyRuntime");
    LOOK_UP(recursion_limit, "Py_GetRecursionLimit");
    LOOK_UP(unicode_length, "PyUnicode_GetLength");
    LOOK_UP(unicode_char, "PyUnicode_ReadChar");
    python.code_type = pi_dlsym(handle, "PyCode_Type");
    python.unicode_type = pi_dlsym(handle, "PyUnicode_Type");
    python.frame_type = pi_dlsym(handle, "PyFrame_Type");
    int lines;
    if (python.layout.frame_objects) {
        LOOK_UP(current_frame_object, "PyEval_GetFrame");
        LOOK_UP(frame_object_line, "PyFrame_GetLineNumber");
        lines = python.current_frame_object && python.frame_object_line && python.frame_type;
    } else if (minor == 11) {
        lines = LOOK_UP(code_line, "PyCode_Addr2Line") != NULL;
    } else {
        lines = LOOK_UP(frame_line, "PyUnstable_InterpreterFrame_GetLine") != NULL;
    }
    if (!lines || !python.is_initialized || !python.gil_check || !python.current_thread_state ||
        !python.this_thread_state || !python.unicode_length || !python.unicode_char ||
        !python.code_type || !python.unicode_type)
        return unusable("a function of its C API is missing");
    announce_mode =
        pi_python_can_defer(&python) ? PI_PYTHON_FRAMES_HELD_AND_DEFERRED : PI_PYTHON_FRAMES_HELD;
    if (announce_mode == PI_PYTHON_FRAMES_HELD)
        snprintf(announce_reason, sizeof(announce_reason),
                 "Python 3.8: only calls made holding the GIL (while the interpreter shuts "
                 "down, its Py_AddPendingCall raises a Python exception without the GIL, which "
                 "can abort the process; 3.9 fixed it)");
    return READY;
}

#undef LOOK_UP

/* Say once per trace file how Python frames are read here. */
static void announce(void)
{
    /* paused: say it in the first window instead */
    if (!atomic_load_explicit(&pi_recording, memory_order_relaxed) ||
        atomic_exchange_explicit(&announced, 1, memory_order_relaxed))
        return;
    uint32_t reason = announce_reason[0] ? pi_intern_cstr(announce_reason) : 0;
    pi_emit(PI_REC_PYTHON, 0, pi_clock_ticks(), 0, python.version, announce_mode, reason);
}

/*
 * Another thread is resolving the interpreter (a few ms of symbol look-ups,
 * longer on a loaded machine): wait for it, as a call made meanwhile would
 * otherwise lose its frames, the first allocation of a worker thread
 * typically. The wait is bounded: the prober takes the loader's lock, which
 * a thread calling from a library constructor may hold.
 */
#define PROBE_WAIT_NS 50000000u

static __thread int probing_here __attribute__((tls_model("initial-exec"))); /* this thread is the prober: never wait for itself */

static int wait_for_probe(void)
{
    if (probing_here)
        return 0;
    uint64_t until = pi_clock_ticks() + (uint64_t)(pi_recorder_ticks_per_second() * PROBE_WAIT_NS / 1e9);
    while (atomic_load_explicit(&state, memory_order_acquire) == PROBING) {
        if (pi_clock_ticks() > until)
            return 0;
        sched_yield();
    }
    return 1;
}

const struct pi_python *pi_python_ready(void)
{
    return atomic_load_explicit(&state, memory_order_acquire) == READY &&
                   atomic_load_explicit(&announced, memory_order_relaxed)
               ? &python
               : NULL;
}

const struct pi_python *pi_python_get(void)
{
    int now = atomic_load_explicit(&state, memory_order_acquire);
    if (__builtin_expect(now == READY, 1)) {
        if (__builtin_expect(!atomic_load_explicit(&announced, memory_order_relaxed), 0))
            announce();
        return &python;
    }
    if (now == UNUSABLE) {
        if (!atomic_load_explicit(&announced, memory_order_relaxed))
            announce();
        return NULL;
    }
    if (now == PROBING)
        return wait_for_probe() ? pi_python_get() : NULL;
    if (now == ABSENT && pi_clock_ticks() < next_probe)
        return NULL;
    if (!atomic_compare_exchange_strong(&state, &now, PROBING))
        return NULL;
    probing_here = 1;
    int found = resolve();
    probing_here = 0;
    if (found == ABSENT)
        next_probe = pi_clock_ticks() + (uint64_t)(pi_recorder_ticks_per_second() / 10);
    atomic_store_explicit(&state, found, memory_order_release);
    if (found == UNUSABLE) {
        /* once per image (fork children inherit the state): the user asked for none, or is told */
        if (pi_setting_flag("PROFINJECT_PY_FRAMES"))
            pi_diag("Python %u.%u: no Python frames or time samples: %s", python.version >> 24,
                    (python.version >> 16) & 0xff, announce_reason);
        announce();
    }
    if (found != READY)
        return NULL;
    for (int i = 0; i < ON_FOUND_MAX; i++) {
        void (*callback)(void) = atomic_load(&on_found[i]);
        if (callback)
            callback();
    }
    return pi_python_get();
}

void pi_python_on_found(void (*callback)(void))
{
    for (int i = 0; i < ON_FOUND_MAX; i++) {
        void (*none)(void) = NULL;
        if (atomic_compare_exchange_strong(&on_found[i], &none, callback))
            break;
    }
    if (atomic_load_explicit(&state, memory_order_acquire) == READY)
        callback();
}

void pi_python_forget_announced(void)
{
    atomic_store_explicit(&announced, 0, memory_order_relaxed);
}

int pi_python_holds_gil(const struct pi_python *py)
{
    if (!py->is_initialized())
        return 0;
    void *mine = py->this_thread_state();
    return mine && py->current_thread_state() == mine && py->gil_check();
}

int pi_python_can_defer(const struct pi_python *py)
{
    return ((py->version >> 16) & 0xff) >= 9 && py->add_pending_call && py->is_finalizing;
}
