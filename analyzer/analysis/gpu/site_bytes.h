/*
 * site_bytes.h - device memory by call site: the stack an allocation was
 * asked for from, read into frames and text, with the bytes and count of
 * what it holds (the peak's holders, leaks, what a failed request came from).
 */
#ifndef PI_SITE_BYTES_H
#define PI_SITE_BYTES_H

#include <stdint.h>

#include "reader/trace_reader.h"

/* The site of allocations made before a capture window, while paused */
#define PI_BEFORE_WINDOW_SITE UINT32_MAX

struct pi_call_site;

struct pi_site_bytes {
    uint32_t stack; /* stack id in the file it came from, resolved below */
    char *text;     /* the call site's text form */
    uint64_t bytes, count;
    struct pi_call_site *site; /* frames, headline (call_sites.h); NULL when none */
};

/* pi_site_resolve, pi_site_free - read @site_bytes's stack and its text from @reader; let go */
void pi_site_resolve(struct pi_site_bytes *site_bytes, const struct pi_reader *reader);
void pi_site_free(struct pi_site_bytes *site_bytes);

/* pi_site_headline - the line to act on of @site_bytes ("train.py:45 in train_step") */
const char *pi_site_headline(const struct pi_site_bytes *site_bytes);

#endif
