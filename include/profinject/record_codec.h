/*
 * record_codec.h - the reversible transform applied to a frame's records
 * before compression, shared by the writer (encode) and the reader (decode).
 *
 * Fixed-size records compress poorly as rows: neighbouring bytes belong to
 * unrelated fields. Two cheap steps make a frame compress to a few bytes
 * per event:
 *   1. ts becomes the difference to the end (ts + dur) of the previous
 *      slot: for back-to-back events only the gap is left, not the
 *      previous duration a second time (wrapping arithmetic, so any
 *      bytes, string continuations included, survive);
 *   2. the bytes are transposed: byte k of every slot, then byte k+1, ...
 *      so a column of kinds or thread ids becomes one long run.
 */
#ifndef PROFINJECT_RECORD_CODEC_H
#define PROFINJECT_RECORD_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace_format.h"

#define PI_CODEC_FEATURES (PI_FEATURE_TS_DELTA | PI_FEATURE_SHUFFLE)

/* pi_codec_encode - transform @n records from @in into @out (n * PI_RECORD_SIZE bytes) */
static inline void pi_codec_encode(const struct pi_record *in, size_t n, uint8_t *out)
{
    uint64_t prev_end = 0;
    for (size_t i = 0; i < n; i++) {
        struct pi_record r = in[i];
        r.ts = in[i].ts - prev_end;
        prev_end = in[i].ts + in[i].dur;
        const uint8_t *bytes = (const uint8_t *)&r;
        for (size_t b = 0; b < PI_RECORD_SIZE; b++)
            out[b * n + i] = bytes[b];
    }
}

/* pi_codec_decode - inverse of pi_codec_encode: @in bytes back into @n records at @out */
static inline void pi_codec_decode(const uint8_t *in, size_t n, struct pi_record *out)
{
    uint64_t prev_end = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t *bytes = (uint8_t *)&out[i];
        for (size_t b = 0; b < PI_RECORD_SIZE; b++)
            bytes[b] = in[b * n + i];
        out[i].ts += prev_end;
        prev_end = out[i].ts + out[i].dur;
    }
}

#endif
