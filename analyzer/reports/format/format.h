/*
 * format.h - numbers for people: durations and sizes with a unit chosen
 * for reading ("12.3 ms", "4.0 MiB"). Each call returns a pointer into a
 * small ring of buffers, so a few can appear in one printf.
 */
#ifndef PI_FORMAT_H
#define PI_FORMAT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* The first screen of the text report is at most this wide (and, with the verdict, key numbers
 * and loss, 40 lines). */
#define PI_SCREEN_WIDTH 100

const char *pi_format_ns(double ns);
const char *pi_format_bytes(double bytes);

/* pi_format_fit - @text in at most @width characters: a longer one keeps its
 * start and its end (a path's file name) with "..." for the middle; into @out */
const char *pi_format_fit(const char *text, size_t width, char *out, size_t size);

/* pi_print_wrapped - @prefix then @text, broken at spaces into lines of at most @width
 * characters (a word longer than a line stays whole), the lines after the first
 * indented by @indent spaces; ends with a newline */
void pi_print_wrapped(FILE *out, const char *prefix, const char *text, int indent, int width);

#endif
