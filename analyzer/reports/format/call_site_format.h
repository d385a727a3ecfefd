/*
 * call_site_format.h - one call site in each output format: Python frames
 * first (the line to act on, then its callers), native frames below
 * (folded away in HTML), and in JSON both as structured frames beside the
 * text form.
 */
#ifndef PI_CALL_SITE_FORMAT_H
#define PI_CALL_SITE_FORMAT_H

#include <stdio.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/sites/call_sites.h"

struct cJSON;

/**
 * pi_call_site_text - print @site's frames, one per line after @indent:
 * its Python frames (at most 6), then "native:" and its first named
 * native frames; @fallback alone when @site is NULL
 */
void pi_call_site_text(FILE *out, const struct pi_call_site *site, const char *fallback,
                       const char *indent);

/**
 * pi_call_site_json - @site as {"text", "headline", "python": [{file, line,
 * function}], "native": [{module, build_id, offset, symbol, symbol_offset}]};
 * with NULL, text and headline are @fallback and the lists are empty
 */
struct cJSON *pi_call_site_json(const struct pi_call_site *site, const char *fallback);

/**
 * pi_call_site_html - @site as a <details> element: @summary_html (already
 * escaped) and the headline visible, the Python frames inside, the native
 * frames folded once more
 */
void pi_call_site_html(FILE *out, const struct pi_call_site *site, const char *fallback,
                       const char *summary_html);

/* pi_site_bytes_json - @n call sites with their bytes and counts as [{bytes, count, stack}] */
struct cJSON *pi_site_bytes_json(const struct pi_site_bytes *sites, size_t n);

/* pi_html_text - write @text with the characters HTML gives meaning to escaped */
void pi_html_text(FILE *out, const char *text);

#endif
