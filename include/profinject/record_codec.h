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

/* Records transposed per step: the block stays in L1 and each of the 48
 * output columns gets one whole cache line per block. */
#define PI_CODEC_BLOCK 64

/* pi_codec_encode - transform @n records from @in into @out (n * PI_RECORD_SIZE bytes) */
static inline void pi_codec_encode(const struct pi_record *in, size_t n, uint8_t *out)
{
    struct pi_record block[PI_CODEC_BLOCK];
    uint64_t prev_end = 0;
    for (size_t base = 0; base < n; base += PI_CODEC_BLOCK) {
        size_t count = n - base < PI_CODEC_BLOCK ? n - base : PI_CODEC_BLOCK;
        for (size_t i = 0; i < count; i++) {
            block[i] = in[base + i];
            block[i].ts = in[base + i].ts - prev_end;
            prev_end = in[base + i].ts + in[base + i].dur;
        }
        const uint8_t *bytes = (const uint8_t *)block;
        for (size_t b = 0; b < PI_RECORD_SIZE; b++) {
            uint8_t *column = out + b * n + base;
            for (size_t i = 0; i < count; i++)
                column[i] = bytes[i * PI_RECORD_SIZE + b];
        }
    }
}

/* pi_codec_decode - inverse of pi_codec_encode: @in bytes back into @n records at @out */
static inline void pi_codec_decode(const uint8_t *in, size_t n, struct pi_record *out)
{
    uint64_t prev_end = 0;
    for (size_t base = 0; base < n; base += PI_CODEC_BLOCK) {
        size_t count = n - base < PI_CODEC_BLOCK ? n - base : PI_CODEC_BLOCK;
        uint8_t *bytes = (uint8_t *)&out[base];
        for (size_t b = 0; b < PI_RECORD_SIZE; b++) {
            const uint8_t *column = in + b * n + base;
            for (size_t i = 0; i < count; i++)
                bytes[i * PI_RECORD_SIZE + b] = column[i];
        }
        for (size_t i = 0; i < count; i++) {
            out[base + i].ts += prev_end;
            prev_end = out[base + i].ts + out[base + i].dur;
        }
    }
}

#endif
