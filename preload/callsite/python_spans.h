/*
 * python_spans.h - exact spans: every call of chosen Python functions, with
 * its thread, its time, its thread's CPU time and the change of device
 * memory over it (PI_REC_SPAN), in every process of the tree.
 *
 * Two halves. The Python half (python_spans.py, built into the library)
 * replaces each marked function, where it is defined, by a wrapper that
 * calls the C half on entry and on return; functions not marked are not
 * touched and cost nothing. The C half keeps each thread's open spans on
 * a small stack in thread-local storage and writes one record a call when
 * it returns. Built-in marks need no setting (enum pi_span_kind): every
 * optimizer's step (PyTorch's global optimizer hooks), backward, a
 * DataLoader iterator's __next__, a thread's outermost nn.Module call, and
 * Transformers' pipeline, generate, tokenizer and from_pretrained calls;
 * PROFINJECT_SPANS adds the user's own, as module:qualname.
 *
 * The Python half runs once per interpreter, at the first safe point of its
 * main thread (the Python time sampler's pending call), so spans need the
 * sampler on (PROFINJECT_PY_TIME_MS > 0, the default); on Python 3.8, from a
 * thread of its own holding the GIL. A fork child keeps its parent's
 * wrappers and starts with no span open.
 * docs/ARCHITECTURE.md, decision 30, says why wrappers and not sys.monitoring.
 */
#ifndef PI_PYTHON_SPANS_H
#define PI_PYTHON_SPANS_H

#include <stdint.h>

#include "python_runtime.h"

/* pi_python_spans_at_safe_point - in the main thread holding the GIL, between two
 * bytecodes (a pending call): install the Python half the first time, later mark the
 * functions that appeared since (a script's own) */
void pi_python_spans_at_safe_point(const struct pi_python *py);

/* pi_python_spans_start - install the Python half where no sampler's pending call will
 * (Python 3.8) */
void pi_python_spans_start(void);

#endif
