/* summary_record.c - checks of a PI_REC_SUMMARY body (see summary_record.h). */
#include "summary_record.h"

#include <string.h>

#include "profinject/histogram_buckets.h"
#include "profinject/summary_buckets.h"

static int summarised_kind(unsigned kind)
{
    return kind == PI_REC_GPU_LAUNCH || kind == PI_REC_GPU_COPY || kind == PI_REC_GPU_TIME ||
           kind == PI_REC_IO || kind == PI_REC_WAIT || kind == PI_REC_CALL_SITE ||
           kind == PI_REC_SPAN;
}

/* Whether @a * @b fits 64 bits, with the product in @product. */
static int multiply(uint64_t a, uint64_t b, uint64_t *product)
{
    return !__builtin_mul_overflow(a, b, product);
}

static int check_totals(const struct pi_summary *s, const char **why)
{
    const struct pi_summary_body *b = &s->body;
    if (s->count == 0) {
        *why = "summary of no records";
        return -1;
    }
    if (b->min_ns > b->max_ns) {
        *why = "summary minimum above its maximum";
        return -1;
    }
    uint64_t low, high;
    if (!multiply(b->min_ns, s->count, &low) || b->total_ns < low ||
        (multiply(b->max_ns, s->count, &high) && b->total_ns > high)) {
        *why = "summary total outside count times its minimum and maximum";
        return -1;
    }
    return 0;
}

/* Format 12's bucket bytes into @words: rising indexes, none out of range, every byte used. */
static int decode_buckets(const uint8_t *bytes, const uint8_t *end, uint32_t count,
                          uint64_t *words)
{
    uint64_t index = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t step, n;
        if (pi_leb128_get(&bytes, end, &step) != 0 || pi_leb128_get(&bytes, end, &n) != 0 ||
            (i > 0 && step == 0) || step >= PI_BUCKET_COUNT || n == 0 || n >> 48)
            return -1;
        index += step;
        if (index >= PI_BUCKET_COUNT)
            return -1;
        words[i] = PI_SUMMARY_BUCKET(index, n);
    }
    return bytes == end ? 0 : -1;
}

int pi_summary_parse(const struct pi_record *rec, uint32_t slots_left, unsigned version,
                     uint64_t *words, struct pi_summary *out, const char **why)
{
    uint64_t length = rec->arg[1], count = rec->arg[0];
    const void *bytes = rec + 1;
    if (length < sizeof(out->body) || length > PI_MAX_SUMMARY_LEN ||
        pi_string_slots(length) > slots_left) {
        *why = "summary length out of range";
        return -1;
    }
    memcpy(&out->body, bytes, sizeof(out->body));
    out->count = count;
    const struct pi_summary_body *b = &out->body;
    if (!summarised_kind(b->kind)) {
        *why = "summary of a record kind that is never summarised";
        return -1;
    }
    const uint8_t *buckets = (const uint8_t *)bytes + sizeof(out->body);
    if (version >= 12) {
        if (b->bucket_count > PI_BUCKET_COUNT ||
            decode_buckets(buckets, buckets + (length - sizeof(*b)), b->bucket_count, words)) {
            *why = "summary buckets do not decode to its bucket count";
            return -1;
        }
    } else {
        if ((uint64_t)b->bucket_count > PI_BUCKET_COUNT ||
            length != sizeof(*b) + (uint64_t)b->bucket_count * sizeof(uint64_t)) {
            *why = "summary length does not match its bucket count";
            return -1;
        }
        memcpy(words, buckets, b->bucket_count * sizeof(uint64_t));
    }
    out->buckets = words;
    uint64_t counted = 0;
    for (uint32_t i = 0; i < b->bucket_count; i++) {
        uint64_t n = PI_SUMMARY_BUCKET_COUNT(words[i]);
        if (PI_SUMMARY_BUCKET_INDEX(words[i]) >= PI_BUCKET_COUNT || n == 0 ||
            __builtin_add_overflow(counted, n, &counted)) {
            *why = "summary bucket out of range";
            return -1;
        }
    }
    if (counted != count) {
        *why = "summary bucket counts do not add up to its count";
        return -1;
    }
    return check_totals(out, why);
}
