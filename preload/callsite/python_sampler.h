/*
 * python_sampler.h - where the main thread's Python code spends its time,
 * without code changes: a thread of ours asks the interpreter, every
 * PROFINJECT_PY_TIME_MS (default 10, 0: never), to run a C function at its
 * next safe point (Py_AddPendingCall, as python_deferred.h does for calls);
 * that function reads the main thread's Python frames and writes a
 * PI_REC_PY_SAMPLE giving them the wall time since the previous sample.
 *
 * The safe point comes between bytecodes, so a span spent inside one call
 * of native code (a PyTorch operator, a tokenizer, a blocking read), with
 * or without the GIL, is given whole to the line that made the call, and
 * a span of pure Python to the line running at its end. Only the thread
 * that runs pending calls (the main thread) is sampled; the weights add up
 * to its wall time while recording. Python 3.9 and newer, like deferred
 * frames.
 */
#ifndef PI_PYTHON_SAMPLER_H
#define PI_PYTHON_SAMPLER_H

/* pi_python_sampler_start - read PROFINJECT_PY_TIME_MS and start sampling (library constructor) */
void pi_python_sampler_start(void);

#endif
