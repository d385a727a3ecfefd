/*
 * format.h - numbers for people: durations and sizes with a unit chosen
 * for reading ("12.3 ms", "4.0 MiB"). Each call returns a pointer into a
 * small ring of buffers, so a few can appear in one printf.
 */
#ifndef PI_FORMAT_H
#define PI_FORMAT_H

#include <stdint.h>

const char *pi_format_ns(double ns);
const char *pi_format_bytes(double bytes);

#endif
