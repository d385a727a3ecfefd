/*
 * terminal_text.h - text for a terminal from untrusted bytes. Names in a trace
 * (file names, thread names, command lines, NVTX ranges, kernels) are whatever the
 * traced program made them: an escape sequence among them would drive the analyst's
 * terminal (retitle it, rewrite the screen, or worse). Everything printed from a trace
 * goes through a stream that shows such bytes as \xNN.
 */
#ifndef PI_TERMINAL_TEXT_H
#define PI_TERMINAL_TEXT_H

#include <stddef.h>
#include <stdio.h>

/**
 * pi_terminal_stream - a stream writing into @out with every byte that is not
 * printable text shown as \xNN: C0 controls but newline and tab, DEL, the C1 controls
 * (U+0080 to U+009F, whose UTF-8 forms xterm and others obey) and bytes that are not
 * UTF-8. Valid UTF-8 text passes unchanged.
 * Return: the stream (close it with pi_terminal_stream_close), or @out itself when no
 * stream could be made.
 */
FILE *pi_terminal_stream(FILE *out);

/**
 * pi_terminal_stream_close - write what @stream holds into the stream it wraps and
 * close it (the wrapped one stays open); @stream may be that one itself
 * Return: 0, or -1 when a write failed (errno set).
 */
int pi_terminal_stream_close(FILE *stream, FILE *out);

/**
 * pi_utf8_length - the length of the UTF-8 character at @s (1 to 4), 0 when @s does
 * not start one (a stray continuation, an overlong form, a surrogate, beyond U+10FFFF),
 * or -1 when the @n bytes there are the valid start of one that goes on
 */
int pi_utf8_length(const unsigned char *s, size_t n);

/* pi_is_utf8 - whether the @length bytes of @text are all UTF-8 */
int pi_is_utf8(const char *text, size_t length);

/**
 * pi_valid_utf8 - a copy of @length bytes of @text with every byte that is not UTF-8
 * replaced by U+FFFD (JSON must be UTF-8: a name in another encoding would make the
 * whole report unreadable to a strict parser)
 * Return: the NUL-terminated copy (free it), its length in *@out_length; NULL when out
 * of memory.
 */
char *pi_valid_utf8(const char *text, size_t length, size_t *out_length);

#endif
