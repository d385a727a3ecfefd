/*
 * in_flight_words.h - what a thread is blocked in, in words, as the
 * library's live answers (`profinject stacks`) and the reports say it:
 * "a condition wait", "a semaphore (a Python lock or queue)", "read on a
 * pipe", "cudaStreamSynchronize (waiting for the GPU)". One definition for
 * both sides of PI_REC_WAIT_IN_FLIGHT.
 */
#ifndef PROFINJECT_IN_FLIGHT_WORDS_H
#define PROFINJECT_IN_FLIGHT_WORDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"

/* pi_in_flight_words - @what (PI_IN_FLIGHT_WAIT, PI_IN_FLIGHT_IO_CALL, PI_IN_FLIGHT_GPU_CALL)
 * as a noun, into @out */
static inline void pi_in_flight_words(uint32_t what, char *out, size_t size)
{
    if (what & PI_IN_FLIGHT_IO) {
        static const char *const classes[PI_FD_CLASS_COUNT] = {
            [PI_FD_FILE] = "file", [PI_FD_PIPE] = "pipe", [PI_FD_SOCKET] = "socket",
            [PI_FD_DEVICE] = "device", [PI_FD_TTY] = "terminal",
        };
        unsigned flags = PI_IN_FLIGHT_IO_FLAGS(what), op = PI_IO_OP(flags);
        unsigned fd_class = PI_IO_CLASS(flags);
        const char *name = pi_io_op_text(op);
        name = name ? name : "an I/O call";
        if (fd_class < PI_FD_CLASS_COUNT && classes[fd_class])
            snprintf(out, size, "%s on a %s", name, classes[fd_class]);
        else
            snprintf(out, size, "%s", name);
        return;
    }
    if (what & PI_IN_FLIGHT_GPU) {
        const char *api = pi_cuda_api_text(PI_CUDA_API(PI_IN_FLIGHT_GPU_FLAGS(what)));
        snprintf(out, size, "%s (waiting for the GPU)", api ? api : "a CUDA call");
        return;
    }
    static const char *const waits[PI_WAIT_KIND_COUNT] = {
        [PI_WAIT_MUTEX] = "a mutex",
        [PI_WAIT_COND] = "a condition wait",
        [PI_WAIT_SEM] = "a semaphore (a Python lock or queue)",
        [PI_WAIT_SLEEP] = "a sleep",
    };
    snprintf(out, size, "%s", what < PI_WAIT_KIND_COUNT && waits[what] ? waits[what] : "a wait");
}

#endif
