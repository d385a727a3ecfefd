/*
 * native_frames.h - the native part of a call site: return addresses of
 * the calling thread, and for each the module it lies in (interned once
 * as a PI_REC_MODULE: load base, GNU build id, path) and its offset in
 * that module's own address space, so the analyzer can name it offline.
 */
#ifndef PI_NATIVE_FRAMES_H
#define PI_NATIVE_FRAMES_H

#include <stdint.h>

#include "profinject/trace_format.h"

#define PI_NATIVE_FRAMES_MAX 24

/**
 * pi_native_walk - return addresses of the calling thread, innermost first,
 * without the profiler's own frames
 * @pcs: receives up to @max addresses
 *
 * Uses libunwind, loaded privately on first use (docs/ARCHITECTURE.md, decision 10).
 * Return: how many were written; 0 when libunwind is not installed.
 */
int pi_native_walk(void **pcs, int max);

/* pi_native_prepare - load the unwinder now, off the application's threads, so that
 * pi_native_walk_loaded can walk */
void pi_native_prepare(void);

/* pi_native_walk_loaded - pi_native_walk where the unwinder is loaded already, else 0:
 * loading it (dlopen, malloc) is no thing to do in a signal handler */
int pi_native_walk_loaded(void **pcs, int max);

/**
 * pi_native_describe - one PI_FRAME_NATIVE frame per address: its module's
 * id, its offset, and the dynamic symbol's name id when dladdr knows one
 * (the analyzer prefers the module's full symbol table)
 * Return: the frames written (addresses in no module are left out).
 */
int pi_native_describe(void *const *pcs, int n, struct pi_stack_frame *out);

#endif
