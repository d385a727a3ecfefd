/*
 * summary_buckets.h - how a summary's histogram is written from format 12,
 * shared by the recorder (summary_table.c) and the reader (summary_record.c).
 *
 * A summary counts its records' durations into the buckets of
 * histogram_buckets.h, of which few are used and those close together. From
 * format 12 each used bucket is written as two LEB128 numbers (7 bits a
 * byte, the low ones first, the high bit set while more follow): its index
 * less the previous bucket's (the first's: its index), then its count. A
 * DataLoader worker's summaries took half the bytes they took as the 8-byte
 * words of formats 6 to 11 (PI_SUMMARY_BUCKET).
 */
#ifndef PROFINJECT_SUMMARY_BUCKETS_H
#define PROFINJECT_SUMMARY_BUCKETS_H

#include <stddef.h>
#include <stdint.h>

/* pi_leb128_size - the bytes @value takes */
static inline size_t pi_leb128_size(uint64_t value)
{
    size_t n = 1;
    while (value >>= 7)
        n++;
    return n;
}

/* pi_leb128_put - write @value at @out; return the byte after it */
static inline uint8_t *pi_leb128_put(uint8_t *out, uint64_t value)
{
    while (value >= 0x80) {
        *out++ = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    *out++ = (uint8_t)value;
    return out;
}

/**
 * pi_leb128_get - read the number at *@at into @value, moving *@at past it
 * Return: 0, or -1 when it runs past @end or past 64 bits (damaged input).
 */
static inline int pi_leb128_get(const uint8_t **at, const uint8_t *end, uint64_t *value)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *at < end && shift < 64; shift += 7) {
        uint8_t byte = *(*at)++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *value = v;
            return 0;
        }
    }
    return -1;
}

#endif
