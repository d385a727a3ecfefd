/*
 * python_lines.h - the lines of the user's own code that held a process's
 * main thread, from the time samples (PI_REC_PY_SAMPLE): each sample's time
 * goes to the deepest frame of its stack outside installed packages and the
 * standard library, e.g. "train_io.py:14 in Files.__getitem__". Function
 * tables stop at the wrappers of a data-loader worker (_worker_loop,
 * BaseProcess.run ...); the line says where in the dataset the time went.
 */
#ifndef PI_PYTHON_LINES_H
#define PI_PYTHON_LINES_H

#include <stdint.h>

#include "analysis/model/model.h"

struct pi_python_line {
    char *file, *function; /* as recorded */
    uint32_t line;
    uint64_t ns;     /* sampled time with this line the deepest of the user's code */
    uint64_t cpu_ns; /* the main thread's CPU time in those samples */
};

/* One process's lines, most time first, kept with the process (model.h). */
struct pi_python_lines {
    struct pi_python_line *lines;
    size_t count, capacity;
    uint64_t sampled_ns; /* all its samples' time, in the user's code or not */
    uint64_t sampled_cpu_ns; /* the CPU time of the samples that measured it */
    uint64_t cpu_unknown_ns; /* the time of the samples that did not (older traces, a first span) */
    void *pending;       /* this file's sample time by stack id, until its end */
    /* the last sample with Python frames: where the main thread was last seen (a process
     * that died: what it was doing) */
    uint64_t last_stack, last_ns;
    struct pi_python_line last; /* its deepest line of the user's code; file NULL: none */
};

/* pi_python_lines_event - account a PI_REC_PY_SAMPLE of @process (record_dispatch.c) */
void pi_python_lines_event(struct pi_process_info *process, const struct pi_event *ev);

/* pi_python_lines_finish_file - resolve @process's stacks while the file's definitions are
 * known */
void pi_python_lines_finish_file(struct pi_process_info *process, const struct pi_reader *reader);

/* pi_python_lines_free - release @process's lines */
void pi_python_lines_free(struct pi_process_info *process);

#endif
