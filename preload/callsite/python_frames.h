/*
 * python_frames.h - the Python frames of the calling thread, read while it
 * holds the GIL (python_runtime.h says how, per version).
 */
#ifndef PI_PYTHON_FRAMES_H
#define PI_PYTHON_FRAMES_H

#include "profinject/trace_format.h"
#include "python_runtime.h"

/* A Trainer's evaluation reaches a BERT layer's Linear 40 frames down (a module call is three
 * frames): a walk cut at 32 lost the outer frames, and Trainer.train's inclusive time lost
 * those samples. A stack record holds 170 frames (PI_MAX_STRING_LEN). */
#define PI_PYTHON_FRAMES_MAX 96

/* pi_python_frames_skip_file - frames of code from file @filename (a str object, compared by
 * address) are left out of every walk: the spans' wrappers (python_spans.h) */
void pi_python_frames_skip_file(const void *filename);

/**
 * pi_python_frames - the calling thread's Python frames, innermost first,
 * as PI_FRAME_PYTHON frames (file and function interned, line)
 * @py: the interpreter (pi_python_get); the caller checked that this
 *      thread holds the GIL (pi_python_holds_gil)
 * @out: receives up to @max frames
 * @at_safe_point: the frames are read at the interpreter's next safe point
 *      for a call made earlier: an innermost frame that has only just been
 *      entered (at its RESUME) was not there at that call and is left out
 *
 * Runs no Python code, allocates no Python object, changes no reference
 * count. Return: the number of frames.
 */
int pi_python_frames(const struct pi_python *py, struct pi_stack_frame *out, int max,
                     int at_safe_point);

/**
 * pi_python_frames_of_blocked - the frames of another thread, blocked in a
 * wait (pi_wait_begin) whose Python thread state is @thread_state: stable
 * while it stays blocked, read without the GIL by the thread that ends the
 * process: from the thread state's frame (3.8 to 3.10) or frame chain
 * (3.11 on) by the version's layout.
 * Return: the number of frames.
 */
int pi_python_frames_of_blocked(const struct pi_python *py, void *thread_state,
                                struct pi_stack_frame *out, int max);

#endif
