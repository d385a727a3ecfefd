/*
 * python_stacks.h - what every Python thread of this process is doing now,
 * for `profinject stacks`: each thread's frames, innermost first, named as
 * the reports name call sites, and the threads that run no Python.
 */
#ifndef PI_PYTHON_STACKS_H
#define PI_PYTHON_STACKS_H

#include <stddef.h>

/**
 * pi_python_stacks - every Python thread's stack as text
 * @out: receives the text, lines ending in '\n' (cut at @size, and said)
 * @timeout_ms: the longest wait for the interpreter's lock (GIL)
 *
 * The frames are read by a thread of the profiler's own that takes the GIL,
 * as any extension's thread does to run Python: the process's Python code
 * pauses while it holds it, and the first line says for how long.
 * Return: the length written; where there is no interpreter or the lock is
 * not had in time, @out says why.
 */
size_t pi_python_stacks(char *out, size_t size, int timeout_ms);

#endif
