/*
 * python_spans.c - the C half of exact spans (see python_spans.h).
 *
 * The functions the Python half calls are built here as builtin functions
 * (PyCFunction_NewEx over a static PyMethodDef, METH_O: one argument, no
 * tuple), from C API functions looked up at run time like every other. They
 * run in the calling thread, holding the GIL, and touch nothing but that
 * thread's own stack, the string table and its record buffer.
 */
#include "python_spans.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/background_thread.h"
#include "core/clock.h"
#include "core/diagnostics.h"
#include "core/guard.h"
#include "core/raw_syscalls.h"
#include "core/real_functions.h"
#include "core/recorder.h"
#include "core/settings.h"
#include "profinject/python_files.h"
#include "python_frames.h"
#include "span_stack.h"
#include "profinject/trace_format.h"

/* The Python half, built into the library as a NUL-terminated string
 * (PI_PYTHON_SPANS_SOURCE: its path, from preload/CMakeLists.txt). */
__asm__(".section .rodata\n"
        ".global pi_python_spans_source\n"
        ".hidden pi_python_spans_source\n"
        "pi_python_spans_source:\n"
        ".incbin \"" PI_PYTHON_SPANS_SOURCE "\"\n"
        ".byte 0\n"
        ".previous\n");
extern const char pi_python_spans_source[];

/* PyMethodDef, as every supported version lays it out. */
struct method_def {
    const char *name;
    void *call; /* PyCFunction, or _PyCFunctionFast with METH_FASTCALL */
    int flags;
    const char *doc;
};
#define METH_O 0x0008
#define METH_FASTCALL 0x0080
#define PY_FILE_INPUT 257
/* PyTypeObject.tp_name, after PyObject_VAR_HEAD */
#define TYPE_NAME_OFFSET 24

static struct {
    void *(*new_function)(struct method_def *, void *self, void *module);
    unsigned long long (*as_u64)(void *number);
    void *(*from_u64)(unsigned long long value);
    const char *(*as_utf8)(void *text);
    void *(*from_utf8)(const char *text);
    void *(*new_dict)(void);
    int (*dict_set)(void *dict, const char *key, void *value);
    void *(*dict_get)(void *dict, const char *key); /* borrowed */
    void *(*builtins)(void);                       /* borrowed */
    void *(*compile)(const char *source, const char *filename, int start);
    void *(*eval)(void *code, void *globals, void *locals);
    void *(*call)(void *callable, void *args);
    int (*is_true)(void *object);
    void *(*err_occurred)(void);
    void (*err_fetch)(void **type, void **value, void **traceback);
    void (*err_restore)(void *type, void *value, void *traceback);
    void (*err_clear)(void);
    void (*inc_ref)(void *object);
    void (*dec_ref)(void *object);
    void *(*get_attr)(void *object, const char *name);
    int (*gil_ensure)(void);
    void (*gil_release)(int state);
    void *none, *true_object;
} api;

static const char *const api_names[] = { /* in the order of api's members */
    "PyCFunction_NewEx", "PyLong_AsUnsignedLongLong", "PyLong_FromUnsignedLongLong",
    "PyUnicode_AsUTF8", "PyUnicode_FromString", "PyDict_New", "PyDict_SetItemString",
    "PyDict_GetItemString", "PyEval_GetBuiltins", "Py_CompileString", "PyEval_EvalCode",
    "PyObject_CallObject",
    "PyObject_IsTrue", "PyErr_Occurred", "PyErr_Fetch", "PyErr_Restore", "PyErr_Clear",
    "Py_IncRef", "Py_DecRef", "PyObject_GetAttrString", "PyGILState_Ensure", "PyGILState_Release",
    "_Py_NoneStruct", "_Py_TrueStruct"};

_Static_assert(sizeof(api) == sizeof(api_names) / sizeof(api_names[0]) * sizeof(void *),
               "one name for each member of api");

static void *none(void)
{
    api.inc_ref(api.none);
    return api.none;
}

/* _enter(sid), _leave(sid): sid as _register gave it, | PI_SPAN_RAISED on an exception */
static void *span_enter(void *self, void *arg)
{
    (void)self;
    struct pi_span_stack *s;
    uint64_t sid = api.as_u64(arg);
    if (sid == (uint64_t)-1 && api.err_occurred())
        api.err_clear();
    else if (atomic_load_explicit(&pi_recording, memory_order_relaxed) && (s = pi_span_stack()))
        pi_span_open(s, sid);
    return none();
}

static void *span_leave(void *self, void *arg)
{
    (void)self;
    uint64_t sid = api.as_u64(arg);
    struct pi_span_stack *s = pi_span_stack();
    if (sid == (uint64_t)-1 && api.err_occurred())
        api.err_clear();
    else if (s)
        pi_span_close(s, sid & ~PI_SPAN_RAISED, (sid & PI_SPAN_RAISED) != 0);
    return none();
}

/* The span id of an outermost @module of @type: its class's name; torch.compile's
 * wrapper (OptimizedModule) by the module it compiled, "Net (compiled)", with bit 63 set
 * (not to be kept for the type). */
static uint64_t module_name(void *module, const void *type)
{
    const char *name = pi_python_field(type, TYPE_NAME_OFFSET);
    if (!name)
        return 0;
    uint64_t kind = (uint64_t)PI_SPAN_MODULE << 32;
    if (strcmp(name, "OptimizedModule") == 0 && api.get_attr) {
        void *inner = api.get_attr(module, "_orig_mod");
        if (!inner) {
            api.err_clear();
            return pi_intern_cstr(name) | kind;
        }
        const char *inner_name = pi_python_field(pi_python_object_type(inner), TYPE_NAME_OFFSET);
        char compiled[200];
        snprintf(compiled, sizeof(compiled), "%s (compiled)", inner_name ? inner_name : "?");
        api.dec_ref(inner);
        return pi_intern_cstr(compiled) | kind | 1ull << 63;
    }
    return pi_intern_cstr(name) | kind;
}

/* torch's is_grad_enabled (torch._C's, a C function), given by the Python half once torch
 * is there: whether an outermost module call runs with autograd (training) or without
 * (evaluation, inference); NULL: not asked */
static void *grad_enabled;

static void *grad_mode_from(void *self, void *function)
{
    (void)self;
    if (!grad_enabled && function != api.none) {
        api.inc_ref(function);
        grad_enabled = function;
    }
    return none();
}

/* Whether autograd is off now (1), on (0), or not known (0). */
static int autograd_off(void)
{
    void *enabled = grad_enabled ? api.call(grad_enabled, NULL) : NULL;
    if (!enabled) {
        if (grad_enabled)
            api.err_clear();
        return 0;
    }
    int off = enabled != api.true_object;
    api.dec_ref(enabled);
    return off;
}

/* _module_enter(module), _module_leave(raised): only the outermost call of a thread is a
 * span, named after the module's class (tp_name: its __name__ for a class written in
 * Python), looked up again only when the outermost module changes; marked where it runs
 * with autograd off */
static void *module_enter(void *self, void *module)
{
    (void)self;
    struct pi_span_stack *s = pi_span_stack();
    if (s && s->module_depth++ == 0 && atomic_load_explicit(&pi_recording, memory_order_relaxed)) {
        const void *type = pi_python_object_type(module);
        if (type != s->module_type || !s->module_sid) {
            int guard = pi_guard_enter();
            s->module_sid = module_name(module, type);
            /* a compiled model is named after the model it compiles, which may change */
            s->module_type = s->module_sid >> 63 ? NULL : type;
            s->module_sid &= ~(1ull << 63);
            pi_guard_restore(guard);
        }
        if (s->module_sid) {
            int off = autograd_off(); /* before the span's clock starts */
            pi_span_open(s, s->module_sid);
            if (off)
                pi_span_flag_innermost(s, PI_SPAN_NO_GRAD);
        }
    }
    return none();
}

static void *module_leave(void *self, void *raised)
{
    (void)self;
    struct pi_span_stack *s = pi_span_stack();
    if (s && s->module_depth && --s->module_depth == 0 && s->module_sid)
        pi_span_close(s, s->module_sid, raised == api.true_object);
    return none();
}

/* The span id of an optimizer of @type: "AdamW.step". */
static uint64_t optimizer_name(const void *type)
{
    const char *name = pi_python_field(type, TYPE_NAME_OFFSET);
    char step[200];
    snprintf(step, sizeof(step), "%s.step", name ? name : "?");
    return pi_intern_cstr(step) | (uint64_t)PI_SPAN_OPTIMIZER_STEP << 32;
}

/* PyTorch's global optimizer hooks, hook(optimizer, args, kwargs), called directly: a
 * Python hook between would cost a frame each (a tenth of a small SGD step's cost) */
static void *optimizer_enter(void *self, void *const *args, long nargs)
{
    (void)self;
    struct pi_span_stack *s = pi_span_stack();
    if (s && nargs >= 1 && atomic_load_explicit(&pi_recording, memory_order_relaxed)) {
        const void *type = pi_python_object_type(args[0]);
        if (type != s->optimizer_type) {
            int guard = pi_guard_enter();
            s->optimizer_sid = optimizer_name(type);
            s->optimizer_type = type;
            pi_guard_restore(guard);
        }
        pi_span_open(s, s->optimizer_sid);
    }
    return none();
}

static void *optimizer_leave(void *self, void *const *args, long nargs)
{
    (void)self;
    struct pi_span_stack *s = pi_span_stack();
    if (s && nargs >= 1 && pi_python_object_type(args[0]) == s->optimizer_type)
        pi_span_close(s, s->optimizer_sid, 0);
    return none();
}

/* _register("K:name") -> the span id of name, of kind K */
static void *span_register(void *self, void *text)
{
    (void)self;
    const char *utf8 = api.as_utf8(text);
    if (!utf8) {
        api.err_clear();
        return api.from_u64(0);
    }
    char *rest;
    unsigned long kind = strtoul(utf8, &rest, 10);
    if (*rest == ':')
        rest++;
    int guard = pi_guard_enter();
    uint64_t name = pi_intern_cstr(rest);
    pi_guard_restore(guard);
    return api.from_u64(name | (uint64_t)(kind < PI_SPAN_KIND_COUNT ? kind : 0) << 32);
}

/* _note(text): what the framework said of the calling thread's innermost open span (why
 * torch.compile compiled again), recorded with it */
static void *span_note(void *self, void *text)
{
    (void)self;
    const char *utf8 = api.as_utf8(text);
    struct pi_span_stack *s;
    if (!utf8)
        api.err_clear();
    else if (atomic_load_explicit(&pi_recording, memory_order_relaxed) && (s = pi_span_stack())) {
        int guard = pi_guard_enter();
        uint64_t id = pi_intern_cstr(utf8);
        pi_guard_restore(guard);
        pi_span_note(s, id);
    }
    return none();
}

/* _say(text): one line on the job's stderr, where a mark cannot be kept */
static void *span_say(void *self, void *text)
{
    (void)self;
    const char *utf8 = api.as_utf8(text);
    if (utf8)
        pi_diag("%s", utf8);
    else
        api.err_clear();
    return none();
}

static struct method_def methods[] = {
    {"_enter", span_enter, METH_O, NULL},
    {"_leave", span_leave, METH_O, NULL},
    {"_module_enter", module_enter, METH_O, NULL},
    {"_module_leave", module_leave, METH_O, NULL},
    {"_register", span_register, METH_O, NULL},
    {"_say", span_say, METH_O, NULL},
    {"_note", span_note, METH_O, NULL},
    {"_grad_mode_from", grad_mode_from, METH_O, NULL},
    {"_optimizer_enter", optimizer_enter, METH_FASTCALL, NULL},
    {"_optimizer_leave", optimizer_leave, METH_FASTCALL, NULL},
};

static enum { NOT_YET, INSTALLED, FAILED } state;
static void *again; /* the Python half's _again(): marks what appeared since, True while some wait */

static int look_up(const struct pi_python *py)
{
    if (api.new_function)
        return 0;
    void **slots = (void **)&api;
    for (size_t i = 0; i < sizeof(api_names) / sizeof(api_names[0]); i++)
        if (!(slots[i] = pi_dlsym(py->handle, api_names[i]))) {
            pi_diag("no exact spans: %s not found in this Python", api_names[i]);
            return -1;
        }
    return 0;
}

/* Give @value to the Python half as @name; 0 when done. */
static int give(void *globals, const char *name, void *value)
{
    if (!value)
        return -1;
    int failed = api.dict_set(globals, name, value);
    api.dec_ref(value);
    return failed;
}

static void install(const struct pi_python *py)
{
    state = FAILED;
    pi_span_measure_reads();
    if (look_up(py) != 0)
        return;
    void *type, *value, *traceback; /* whatever was set stays set: we raise nothing */
    api.err_fetch(&type, &value, &traceback);
    void *globals = api.new_dict();
    int failed = !globals || api.dict_set(globals, "__builtins__", api.builtins()) != 0;
    for (size_t i = 0; !failed && i < sizeof(methods) / sizeof(methods[0]); i++)
        failed = give(globals, methods[i].name, api.new_function(&methods[i], NULL, NULL));
    const char *named = getenv("PROFINJECT_SPANS"); /* a TEXT setting: read as given */
    if (!failed)
        failed = give(globals, "_named", api.from_utf8(named ? named : ""));
    if (!failed)
        failed = give(globals, "_builtin",
                      api.from_u64(strcmp(pi_setting_choice("PROFINJECT_SPANS_BUILTIN"), "1") == 0));
    /* its file name is what a profile of the job shows for the wrappers' own frames */
    void *code =
        failed ? NULL : api.compile(pi_python_spans_source, PI_SPANS_PYTHON_FILE, PY_FILE_INPUT);
    if (code) /* every code object compiled from it shares the file name object */
        pi_python_frames_skip_file(pi_python_field(code, py->layout.code_filename));
    void *result = code ? api.eval(code, globals, globals) : NULL;
    if (code)
        api.dec_ref(code);
    if (result) {
        api.dec_ref(result);
        if ((again = api.dict_get(globals, "_again")))
            api.inc_ref(again);
        state = INSTALLED;
    } else {
        pi_diag("no exact spans: their Python half could not run");
    }
    if (api.err_occurred())
        api.err_clear();
    if (globals)
        api.dec_ref(globals);
    api.err_restore(type, value, traceback);
}

void pi_python_spans_at_safe_point(const struct pi_python *py)
{
    if (state == NOT_YET) {
        install(py);
        return;
    }
    if (state != INSTALLED || !again)
        return;
    void *type, *value, *traceback;
    api.err_fetch(&type, &value, &traceback);
    void *waiting = api.call(again, NULL);
    if (!waiting || !api.is_true(waiting)) {
        api.dec_ref(again);
        again = NULL;
    }
    if (waiting)
        api.dec_ref(waiting);
    if (api.err_occurred())
        api.err_clear();
    api.err_restore(type, value, traceback);
}

/*
 * Python 3.8 has no safe pending call from another thread (python_runtime.c: its
 * Py_AddPendingCall can abort a process that shuts down), so no sampler runs there.
 * The Python half is installed instead by a thread of its own that takes the GIL
 * once the interpreter runs (PyGILState_Ensure, as any thread a C library starts
 * does), then ends. A 3.8 interpreter that began to finalize makes a thread taking
 * the GIL exit: this thread, which holds nothing then.
 */
#define RUNNING_POLL_NS 1000000u
#define RUNNING_POLLS 30000u

static void *install_with_gil(void *unused)
{
    (void)unused;
    pi_guard_enter(); /* nothing this thread does is recorded */
    const struct pi_python *py = pi_python_get();
    uint32_t never = 0; /* a futex nobody wakes: a sleep no hook sees */
    for (unsigned i = 0; py && !py->is_initialized() && i < RUNNING_POLLS; i++)
        pi_futex_wait(&never, 0, RUNNING_POLL_NS);
    if (!py || !py->is_initialized() || (py->is_finalizing && py->is_finalizing()) ||
        look_up(py) != 0)
        return NULL;
    int gil = api.gil_ensure();
    install(py);
    api.gil_release(gil);
    return NULL;
}

static void found(void)
{
    const struct pi_python *py = pi_python_get();
    if (!py || pi_python_can_defer(py) || state != NOT_YET)
        return; /* 3.9 on: the sampler's first pending call installs them */
    if (pi_background_thread("pi-py-spans", install_with_gil, NULL) != 0)
        pi_diag("no exact spans: their thread could not start");
}

void pi_python_spans_start(void)
{
    pi_python_on_found(found);
}
