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
/* CPU samples go deeper: from a BLAS kernel up to the ATen operator that called it */
#define PI_NATIVE_SAMPLE_FRAMES_MAX 48

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
 * pi_native_walk_signal can walk */
void pi_native_prepare(void);

/**
 * pi_native_walk_signal - for a signal handler: the interrupted thread's frames, from the
 * interrupted instruction (the handler's own frames and the signal's trampoline are not
 * among them)
 * @context: the handler's third argument (its ucontext_t)
 * @pcs: receives up to @max addresses, innermost first
 *
 * Loads nothing, allocates nothing, touches no thread-local storage of another library, waits
 * for no lock (loader_lock.h): 0 unless pi_native_can_walk_signal said yes before.
 * Return: the addresses written, or PI_NATIVE_LOADER_BUSY when the loader's list of modules
 * was locked and the thread was not walked.
 */
int pi_native_walk_signal(void *context, void **pcs, int max);
#define PI_NATIVE_LOADER_BUSY (-2)

/* pi_native_can_walk_signal - whether pi_native_walk_signal can walk: libunwind is there,
 * with its frame-by-frame API, and the loader's list lock was found (loads it: call it
 * outside any handler) */
int pi_native_can_walk_signal(void);

/**
 * pi_native_describe - one PI_FRAME_NATIVE frame per address: its module's
 * id, its offset, and the dynamic symbol's name id when dladdr knows one
 * (the analyzer prefers the module's full symbol table)
 * Return: the frames written (addresses in no module are left out).
 */
int pi_native_describe(void *const *pcs, int n, struct pi_stack_frame *out);

/**
 * pi_native_describe_by_range - pi_native_describe without the dynamic symbol's
 * name: the module is found among the executable ranges of the loaded modules
 * (read again when an address lies in none), not by dladdr, which scans
 * every dynamic symbol of the module (libtorch_cpu has 74,000: 0.8 ms a
 * stack). Not thread-safe: one caller at a time (the native sampler's drain).
 */
int pi_native_describe_by_range(void *const *pcs, int n, struct pi_stack_frame *out);

#endif
