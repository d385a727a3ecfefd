/*
 * python_runtime.h - the Python interpreter of this process, if any: its C
 * API functions looked up at run time (the preload never links libpython),
 * its version, the frame layout of that version, and whether the calling
 * thread holds the GIL.
 *
 * What is read and why (CPython 3.8 to 3.13):
 * - "holds the GIL": Py_IsInitialized(), then the thread state that holds
 *   the GIL (_PyThreadState_UncheckedGet, PyThreadState_GetUnchecked in
 *   3.13; neither aborts when there is none, unlike PyThreadState_Get) must
 *   be this thread's own (PyGILState_GetThisThreadState, callable from any
 *   thread) and PyGILState_Check() must agree. PyGILState_Check alone
 *   answers 1 when its check is disabled (sub-interpreters, before
 *   initialisation), so it is not trusted alone.
 * - 3.8 to 3.10: frames are PyFrameObjects. PyEval_GetFrame() returns the
 *   current one borrowed, without allocating; f_back and f_code are fields
 *   of the public struct (frameobject.h); PyFrame_GetLineNumber() computes
 *   the line from the line table without allocating.
 * - 3.11 to 3.13: frames are _PyInterpreterFrames, and the public
 *   PyThreadState_GetFrame, PyFrame_GetBack and PyEval_GetFrame create a
 *   PyFrameObject for each frame that has none (_PyFrame_GetFrameObject).
 *   That allocation can start a garbage collection (3.11 collects inside
 *   _PyObject_GC_Link) and so run finalizers, which are Python code. So the
 *   chain is walked through the layout of each version (the struct offsets
 *   of its internal headers, pycore_frame.h; 3.13 publishes them at run time
 *   in _PyRuntime.debug_offsets for tools like this one), and lines come
 *   from PyCode_Addr2Line (3.11) or PyUnstable_InterpreterFrame_GetLine
 *   (3.12, 3.13), which read the line table and allocate nothing.
 * - Names: co_filename and co_qualname (co_name before 3.11) are fields of
 *   the code object (cpython/code.h). PyUnicode_AsUTF8AndSize is not used:
 *   for a non-ASCII string without a cached UTF-8 form it allocates (and
 *   can fail with MemoryError, replacing the caller's exception), so the
 *   characters are read one by one with PyUnicode_GetLength and
 *   PyUnicode_ReadChar, which allocate nothing for an exact str and an index
 *   in range (both checked first), and encoded here.
 * - Every object is type-checked (ob_type against PyCode_Type,
 *   PyUnicode_Type, PyFrame_Type) before its fields are read, and no
 *   reference count is touched.
 * Free-threaded builds (3.13t) and other versions are recognised and left
 * alone: the trace says so (PI_REC_PYTHON).
 */
#ifndef PI_PYTHON_RUNTIME_H
#define PI_PYTHON_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* Where the fields are in the running version; 0 marks a field it lacks. */
struct pi_python_layout {
    int frame_objects;     /* 3.8-3.10: the chain is PyFrameObjects */
    size_t tstate_frame;   /* 3.8-3.10: PyThreadState.frame, the thread's innermost */
    size_t tstate_cframe;  /* 3.11, 3.12: PyThreadState.cframe */
    size_t cframe_current; /* 3.11, 3.12: _PyCFrame.current_frame */
    size_t tstate_current; /* 3.13: PyThreadState.current_frame */
    size_t frame_back;     /* f_back, or _PyInterpreterFrame.previous */
    size_t frame_code;     /* f_code, or f_executable (3.13) */
    size_t frame_lasti;    /* 3.8-3.10: int f_lasti */
    size_t frame_instr;    /* 3.11+: prev_instr (instr_ptr in 3.13) */
    size_t frame_owner;    /* 3.11+: char owner */
    size_t code_filename;
    size_t code_name;           /* co_qualname from 3.11, co_name before */
    size_t code_adaptive;       /* 3.11+: co_code_adaptive, the first code unit */
    size_t code_firsttraceable; /* 3.11+: int _co_firsttraceable, the RESUME */
    /* 3.9-3.12: PyInterpreterState.ceval.eval_breaker, and its recursion_limit
     * and pending.calls_to_do beside it to check the place by; see python_sampler.c.
     * 3.12 queues the main thread's pending calls in _PyRuntime instead:
     * ceval.pending_mainthread.calls_to_do there (runtime_calls_to_do) */
    size_t interp_eval_breaker, interp_recursion_limit, interp_calls_to_do, runtime_calls_to_do;
};

/* The interpreter's functions, as found in this process. */
struct pi_python {
    unsigned version; /* PY_VERSION_HEX */
    void *handle;     /* for dlsym: where the C API is (RTLD_DEFAULT in a python executable) */
    struct pi_python_layout layout;
    const void *code_type, *unicode_type, *frame_type;
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    int (*gil_check)(void);
    void *(*current_thread_state)(void);
    void *(*this_thread_state)(void);
    int (*add_pending_call)(int (*)(void *), void *);
    void *(*main_interpreter)(void); /* PyInterpreterState_Main */
    const char *runtime;             /* _PyRuntime, where exported */
    int (*recursion_limit)(void);    /* Py_GetRecursionLimit: holding the GIL only */
    void *(*current_frame_object)(void);      /* PyEval_GetFrame, 3.8-3.10 */
    int (*frame_object_line)(void *frame);    /* PyFrame_GetLineNumber, 3.8-3.10 */
    int (*code_line)(void *code, int offset); /* PyCode_Addr2Line, 3.11 */
    int (*frame_line)(void *frame);           /* PyUnstable_InterpreterFrame_GetLine, 3.12+ */
    long (*unicode_length)(void *text);
    uint32_t (*unicode_char)(void *text, long index);
};

/**
 * pi_python_get - the interpreter of this process, once it is found and its
 * frames can be read; NULL otherwise (no Python, an unsupported version,
 * PROFINJECT_PY_FRAMES=0). A process without Python looks again at most
 * every 100 ms, so an interpreter loaded later is found.
 */
const struct pi_python *pi_python_get(void);

/* pi_python_ready - the interpreter where it is found already and announced, else NULL;
 * never looks for it (for a signal handler) */
const struct pi_python *pi_python_ready(void);

/**
 * pi_python_on_found - have @callback called once when the interpreter is
 * found usable (in the thread that found it, the guard held), or now if it
 * already was; up to four callbacks, called in the order given
 */
void pi_python_on_found(void (*callback)(void));

/* pi_python_forget_announced - in a fork child: say again in its own file how frames are read */
void pi_python_forget_announced(void);

/* pi_python_holds_gil - nonzero when the calling thread holds the GIL (see above) */
int pi_python_holds_gil(const struct pi_python *py);

/* pi_python_can_defer - nonzero when the next-safe-point path may be used (3.9+) */
int pi_python_can_defer(const struct pi_python *py);

/* pi_python_object_type - the ob_type of @object (PyObject_HEAD, every supported version) */
static inline const void *pi_python_object_type(const void *object)
{
    return ((const void *const *)object)[1];
}

/* pi_python_field - the pointer stored @offset bytes into @object */
static inline void *pi_python_field(const void *object, size_t offset)
{
    return *(void *const *)((const char *)object + offset);
}

#endif
