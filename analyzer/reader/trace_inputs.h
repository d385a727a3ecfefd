/*
 * trace_inputs.h - turn the command line's files and directories into the
 * list of trace files to read.
 */
#ifndef PI_TRACE_INPUTS_H
#define PI_TRACE_INPUTS_H

#include <stddef.h>
#include <stdio.h>

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

/* pi_trace_inputs_find - the index of the input that @path names (the same file, through
 * any link), or -1 */
int pi_trace_inputs_find(const struct pi_trace_inputs *inputs, const char *path);

/* pi_trace_inputs_mode - the permission bits every input has (0600 for traces the recorder
 * wrote): the mode of what is written from them, which holds their command lines and paths */
unsigned pi_trace_inputs_mode(const struct pi_trace_inputs *inputs);

/**
 * pi_open_trace_file - open @path for reading, refusing anything but a regular file
 * (a FIFO would block forever) without waiting on it
 * Return: the stream, or NULL with "PATH: why" in @error.
 */
FILE *pi_open_trace_file(const char *path, char *error, size_t error_size);

/* pi_file_type_name - "a FIFO", "a directory"... for an st_mode that is not a regular file */
const char *pi_file_type_name(unsigned mode);

void pi_trace_inputs_free(struct pi_trace_inputs *inputs);

#endif
