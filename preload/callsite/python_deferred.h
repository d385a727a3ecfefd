/*
 * python_deferred.h - Python frames for calls the main thread makes
 * without the GIL.
 *
 * CPython releases the GIL around blocking calls (Py_BEGIN_ALLOW_THREADS
 * in os.read, select, lock acquire), ctypes releases it around every call
 * into a CDLL, and PyTorch's bindings release it around every operator, so
 * the allocations, launches and data waits of a training loop happen in
 * threads that do not hold it, where frames must not be read. The main
 * thread holds it again as soon as the call returns, and from then on its
 * frames are those of the call until it runs more bytecode. So such a call
 * is queued, and the interpreter is asked to run a C function at its next
 * safe point (Py_AddPendingCall: "the function will be called from the
 * main interpreter thread" holding the GIL, between bytecodes; callable
 * without a thread state or the GIL). That function reads the frames and
 * writes a PI_REC_CALL_SITE for each queued call. The safe point comes
 * after the call instruction that made the call returns (CPython checks for
 * pending calls after each call, at each function entry and backward jump),
 * so the frames are the call's, except for calls made by an operator or an
 * attribute access, which are described at the next call of the same
 * function, or by its caller once it returned.
 *
 * Only the main thread runs pending calls; other threads' calls get Python
 * frames only when made holding the GIL.
 */
#ifndef PI_PYTHON_DEFERRED_H
#define PI_PYTHON_DEFERRED_H

#include <stdint.h>

#include "python_runtime.h"

/* One call waiting for its Python frames. */
struct pi_deferred_call {
    uint16_t kind, flags; /* of the record it completes */
    uint32_t detail;      /* its detail (PI_CALL_SITE_OF) */
    uint64_t ts, key;     /* that record's ts, and key (PI_REC_CALL_SITE) */
    uint32_t native;      /* stack id of its native frames, 0 if none */
};

/**
 * pi_python_defer - queue @call of the calling thread for frames at its
 * next safe point, when it is the thread that runs pending calls
 * Return: 1 when queued, 0 when its frames cannot come this way.
 */
int pi_python_defer(const struct pi_python *py, const struct pi_deferred_call *call);

/* pi_python_deferred_forget - in a fork child: drop the parent's queue */
void pi_python_deferred_forget(void);

#endif
