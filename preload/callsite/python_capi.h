/*
 * python_capi.h - the C API functions that read Python objects from outside
 * the interpreter loop (threading._active, a thread's frames), looked up
 * once per process in the interpreter found at run time. Thread names need
 * the object calls; `profinject stacks` needs the GIL and frame calls too,
 * which Python 3.8 lacks (PyFrame_GetBack and PyFrame_GetCode are 3.9+).
 */
#ifndef PI_PYTHON_CAPI_H
#define PI_PYTHON_CAPI_H

#include "python_runtime.h"

struct pi_python_capi {
    /* objects: every caller's */
    void *(*modules)(void);                          /* PyImport_GetModuleDict, borrowed */
    void *(*dict_item)(void *dict, const char *key); /* PyDict_GetItemString, borrowed */
    void *(*dict_get)(void *dict, void *key);        /* PyDict_GetItem, borrowed */
    int (*dict_next)(void *dict, long *pos, void **key, void **value);
    void *(*get_attr)(void *object, const char *name); /* new */
    unsigned long (*as_unsigned_long)(void *number);
    const char *(*as_utf8)(void *text);
    void (*err_clear)(void);
    void (*dec_ref)(void *object);
    /* the GIL and frames: has_frames says whether they are all there */
    int has_frames;
    int (*gil_ensure)(void); /* PyGILState_Ensure: its PyGILState_STATE */
    void (*gil_release)(int);
    void *(*current_frames)(void);    /* _PyThread_CurrentFrames: {ident: frame}, new */
    void *(*frame_back)(void *frame); /* PyFrame_GetBack, new: 3.9+ */
    void *(*frame_code)(void *frame); /* PyFrame_GetCode, new: 3.9+ */
    int (*frame_line)(void *frame);   /* PyFrame_GetLineNumber */
};

/**
 * pi_python_capi - the functions of @py's interpreter, looked up at the first
 * call (from any thread); later calls return the same table.
 * Return: the table, or NULL when an object call is missing.
 */
const struct pi_python_capi *pi_python_capi(const struct pi_python *py);

#endif
