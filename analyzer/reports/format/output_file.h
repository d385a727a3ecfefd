/*
 * output_file.h - report files written whole or not at all, with the
 * permissions of the traces they come from (they hold the traces' command
 * lines and paths).
 */
#ifndef PI_OUTPUT_FILE_H
#define PI_OUTPUT_FILE_H

#include <stddef.h>
#include <stdio.h>

/* pi_output_mode_set - the permission bits of the files written from here on (the
 * inputs' own, pi_trace_inputs_mode; 0600 until told), less the umask */
void pi_output_mode_set(unsigned mode);
unsigned pi_output_mode(void);

/* pi_open_output - @path created or emptied for writing, with the output mode */
FILE *pi_open_output(const char *path);

/* pi_write_file_atomically - write @size bytes to @path through a temporary file and rename; 0 or -1 */
int pi_write_file_atomically(const char *path, const char *data, size_t size);

/**
 * pi_create_temporary - a new file beside @path, under a name no one can
 * foresee (mkstemp), to write and then rename to @path; its name in @temporary.
 * When @path is a device or a pipe (/dev/null, /dev/stdout), that itself, and
 * @temporary is "" (rename would replace the device node with a file)
 * Return: the stream, or NULL (errno set).
 */
FILE *pi_create_temporary(const char *path, char *temporary, size_t size);

/**
 * pi_commit_temporary - flush, sync and close @out, then rename @temporary to
 * @path when @keep and all of that succeeded; else remove it
 * Return: 0 when @path now holds it, -1 otherwise (errno set).
 */
int pi_commit_temporary(FILE *out, const char *temporary, const char *path, int keep);

#endif
