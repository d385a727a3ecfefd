/*
 * trace_inputs.h - turn the command line's files and directories into the
 * list of trace files to read.
 */
#ifndef PI_TRACE_INPUTS_H
#define PI_TRACE_INPUTS_H

#include <stddef.h>

struct pi_trace_inputs {
    char **paths;
    size_t count;
};

/**
 * pi_trace_inputs_collect - expand @args: files as given, directories to
 * their *.pitrace.zst files, sorted by name
 * Return: 0, or -1 with a message printed (missing path, empty directory).
 */
int pi_trace_inputs_collect(struct pi_trace_inputs *inputs, char **args, int count);

void pi_trace_inputs_free(struct pi_trace_inputs *inputs);

#endif
