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
 * Definitions (strings, modules, stacks) skip both: transposed, a path's
 * bytes would be 48 apart and its repeats invisible to zstd. They follow
 * the frame's other records as rows (pi_codec_encode_frame).
 */
#ifndef PROFINJECT_RECORD_CODEC_H
#define PROFINJECT_RECORD_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "trace_format.h"

#define PI_CODEC_FEATURES (PI_FEATURE_TS_DELTA | PI_FEATURE_SHUFFLE | PI_FEATURE_DEFINITION_ROWS)
/* What files say that were written before definitions became rows: still read. */
#define PI_CODEC_FEATURES_ALL_TRANSPOSED (PI_FEATURE_TS_DELTA | PI_FEATURE_SHUFFLE)

/* Records transposed per step: the block stays in L1 and each of the 48
 * output columns gets one whole cache line per block. */
#define PI_CODEC_BLOCK 64

#if defined(__SSE2__)
/* Transpose a 16x16 byte matrix in registers: r[k] byte j becomes r[j] byte k.
 * Four rounds of interleaving ever wider lanes. */
static inline void pi_codec_transpose16(__m128i r[16])
{
    __m128i a[16], b[16], c[16];
    for (int k = 0; k < 8; k++) {
        a[2 * k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
        a[2 * k + 1] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
    }
    for (int g = 0; g < 16; g += 4) {
        b[g] = _mm_unpacklo_epi16(a[g], a[g + 2]);
        b[g + 1] = _mm_unpackhi_epi16(a[g], a[g + 2]);
        b[g + 2] = _mm_unpacklo_epi16(a[g + 1], a[g + 3]);
        b[g + 3] = _mm_unpackhi_epi16(a[g + 1], a[g + 3]);
    }
    for (int g = 0; g < 16; g += 8)
        for (int k = 0; k < 4; k++) {
            c[g + 2 * k] = _mm_unpacklo_epi32(b[g + k], b[g + 4 + k]);
            c[g + 2 * k + 1] = _mm_unpackhi_epi32(b[g + k], b[g + 4 + k]);
        }
    for (int k = 0; k < 8; k++) {
        r[2 * k] = _mm_unpacklo_epi64(c[k], c[8 + k]);
        r[2 * k + 1] = _mm_unpackhi_epi64(c[k], c[8 + k]);
    }
}
#endif

/* Rows to columns (@to_columns) or back, for @count records from @first;
 * column b of record i lives at columns[b * n + i]. */
static inline void pi_codec_shuffle(uint8_t *rows, uint8_t *columns, size_t n, size_t first,
                                    size_t count, int to_columns)
{
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= count; i += 16)
        for (int part = 0; part < PI_RECORD_SIZE / 16; part++) {
            __m128i r[16];
            for (int k = 0; k < 16; k++)
                r[k] = to_columns
                           ? _mm_loadu_si128((const __m128i *)(rows + (i + k) * PI_RECORD_SIZE +
                                                               16 * part))
                           : _mm_loadu_si128((const __m128i *)(columns + (16 * part + k) * n +
                                                               first + i));
            pi_codec_transpose16(r);
            for (int k = 0; k < 16; k++) {
                if (to_columns)
                    _mm_storeu_si128((__m128i *)(columns + (16 * part + k) * n + first + i), r[k]);
                else
                    _mm_storeu_si128((__m128i *)(rows + (i + k) * PI_RECORD_SIZE + 16 * part),
                                     r[k]);
            }
        }
#endif
    for (; i < count; i++)
        for (size_t b = 0; b < PI_RECORD_SIZE; b++) {
            if (to_columns)
                columns[b * n + first + i] = rows[i * PI_RECORD_SIZE + b];
            else
                rows[i * PI_RECORD_SIZE + b] = columns[b * n + first + i];
        }
}

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
        pi_codec_shuffle((uint8_t *)block, out, n, base, count, 1);
    }
}

/* pi_codec_decode - inverse of pi_codec_encode: @in bytes back into @n records at @out */
static inline void pi_codec_decode(const uint8_t *in, size_t n, struct pi_record *out)
{
    uint64_t prev_end = 0;
    for (size_t base = 0; base < n; base += PI_CODEC_BLOCK) {
        size_t count = n - base < PI_CODEC_BLOCK ? n - base : PI_CODEC_BLOCK;
        pi_codec_shuffle((uint8_t *)&out[base], (uint8_t *)in, n, base, count, 0);
        for (size_t i = 0; i < count; i++) {
            out[base + i].ts += prev_end;
            prev_end = out[base + i].ts + out[base + i].dur;
        }
    }
}

/* pi_codec_record_slots - slots the record at @r takes with its continuation, at most @left */
static inline size_t pi_codec_record_slots(const struct pi_record *r, size_t left)
{
    size_t slots = pi_record_slots(r);
    return slots < left ? slots : left;
}

/*
 * pi_codec_encode_frame - a frame's @n slots from @in into @out: the
 * records that are not definitions encoded as above (gathered in @events,
 * room for @n), then the definitions with their continuation slots as rows,
 * in their order. Return: the definition slots (the frame header's).
 */
static inline uint32_t pi_codec_encode_frame(const struct pi_record *in, size_t n,
                                             struct pi_record *events, uint8_t *out)
{
    size_t definitions = 0, count = 0;
    for (size_t i = 0, slots; i < n; i += slots) {
        slots = pi_codec_record_slots(&in[i], n - i);
        if (pi_record_is_definition(in[i].kind))
            definitions += slots;
    }
    uint8_t *rows = out + (n - definitions) * PI_RECORD_SIZE;
    for (size_t i = 0, slots; i < n; i += slots) {
        slots = pi_codec_record_slots(&in[i], n - i);
        if (pi_record_is_definition(in[i].kind)) {
            memcpy(rows, &in[i], slots * PI_RECORD_SIZE);
            rows += slots * PI_RECORD_SIZE;
        } else {
            memcpy(&events[count], &in[i], slots * PI_RECORD_SIZE);
            count += slots;
        }
    }
    pi_codec_encode(events, count, out);
    return (uint32_t)definitions;
}

/* pi_codec_decode_frame - inverse of pi_codec_encode_frame, the
 * definitions first: @out holds them, then the frame's other records */
static inline void pi_codec_decode_frame(const uint8_t *in, size_t n, size_t definition_slots,
                                         struct pi_record *out)
{
    size_t count = n - definition_slots;
    memcpy(out, in + count * PI_RECORD_SIZE, definition_slots * PI_RECORD_SIZE);
    pi_codec_decode(in, count, out + definition_slots);
}

#endif
