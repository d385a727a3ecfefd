/*
 * Unit: summary records (format 6) through the reader. A valid one hands
 * out its figures and buckets as written, as words (formats 6 to 11) or as
 * LEB128 bytes (format 12); absurd ones (fuzzed input) are an error naming
 * the file and offset, never figures in a report; a format-5 file cannot
 * hold one.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "profinject/histogram_buckets.h"
#include "profinject/summary_buckets.h"
#include "reader/summary_record.h"
#include "synthetic_trace.h"

static const char *path;

/* One summary of 3 waits: 100, 200 and 200 ns, written as the recorder would. */
static uint32_t claimed_buckets; /* nonzero: the body says this many, the record holds its own */

/* @buckets as @version writes them after the body at @out; their length */
static uint32_t bucket_bytes(uint16_t version, const uint64_t *buckets, uint32_t count,
                             uint8_t *out)
{
    if (version < 12) {
        memcpy(out, buckets, count * sizeof(uint64_t));
        return count * (uint32_t)sizeof(uint64_t);
    }
    uint8_t *at = out;
    for (uint32_t i = 0, previous = 0; i < count; i++) {
        uint32_t index = PI_SUMMARY_BUCKET_INDEX(buckets[i]);
        at = pi_leb128_put(at, index - previous);
        at = pi_leb128_put(at, PI_SUMMARY_BUCKET_COUNT(buckets[i]));
        previous = index;
    }
    return (uint32_t)(at - out);
}

static uint32_t write_summary(uint16_t version, struct pi_record *records,
                              struct pi_summary_body *body, const uint64_t *buckets,
                              uint64_t count)
{
    uint64_t bytes[64];
    memcpy(bytes, body, sizeof(*body));
    uint32_t length = (uint32_t)sizeof(*body) +
                      bucket_bytes(version, buckets, body->bucket_count,
                                   (uint8_t *)bytes + sizeof(*body));
    records[0] = (struct pi_record){PI_REC_SUMMARY, 0, 7, 5000, 1000, {count, length, 0}};
    memset(records + 1, 0, pi_string_slots(length) * sizeof(*records));
    memcpy(records + 1, bytes, length);
    if (claimed_buckets)
        ((struct pi_summary_body *)(void *)(records + 1))->bucket_count = claimed_buckets;
    return 1 + pi_string_slots(length);
}

static struct pi_summary_body waits_body(void)
{
    struct pi_summary_body b = {PI_REC_WAIT, 0, 2, {PI_WAIT_MUTEX, 0, 0}, 500, 100, 200, 0};
    return b;
}

static void file_with(uint16_t version, struct pi_summary_body body, const uint64_t *buckets,
                      uint64_t count)
{
    path = synthetic_begin();
    uint8_t header[4096];
    synthetic_frame(header, synthetic_header(header, version));
    struct pi_record records[16];
    synthetic_records(records, write_summary(version, records, &body, buckets, count));
    synthetic_end();
}

/* The first record's error, "" when it reads; its buckets into @words (room for its count). */
static const char *first_record(struct pi_summary *out, uint64_t *words)
{
    static char error[700];
    error[0] = '\0';
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    cr_assert(reader, "%s", error);
    struct pi_event ev;
    if (pi_reader_next(reader, &ev) != PI_READ_EVENT) {
        snprintf(error, sizeof(error), "%s", pi_reader_error(reader));
    } else {
        cr_assert_eq(ev.rec.kind, PI_REC_SUMMARY);
        const struct pi_summary *s = pi_reader_summary(reader);
        cr_assert(s);
        *out = *s;
        memcpy(words, s->buckets, s->body.bucket_count * sizeof(*words));
        out->buckets = NULL; /* valid only until the next record */
        cr_assert_eq(pi_reader_next(reader, &ev), PI_READ_END, "the slots are consumed");
    }
    pi_reader_close(reader);
    return error;
}

/* The summary of 3 waits (100, 200 and 200 ns) written by format @version reads back whole. */
static void valid_summary_reads_back_in(uint16_t version)
{
    uint64_t buckets[2] = {PI_SUMMARY_BUCKET(pi_bucket_of(100), 1),
                           PI_SUMMARY_BUCKET(pi_bucket_of(200), 2)};
    file_with(version, waits_body(), buckets, 3);
    struct pi_summary s;
    uint64_t words[2];
    const char *error = first_record(&s, words);
    cr_assert_str_empty(error);
    cr_assert_eq(s.count, 3);
    cr_assert_eq(s.body.kind, PI_REC_WAIT);
    cr_assert_eq(s.body.total_ns, 500);
    cr_assert_eq(s.body.bucket_count, 2);
    cr_assert_eq(words[0], buckets[0], "format %u", version);
    cr_assert_eq(words[1], buckets[1], "format %u", version);
}

Test(summary_reader, valid_summary_reads_back)
{
    valid_summary_reads_back_in(PI_FORMAT_VERSION);
    valid_summary_reads_back_in(11); /* words */
}

static void assert_refused(struct pi_summary_body body, const uint64_t *buckets, uint64_t count,
                           const char *words)
{
    file_with(PI_FORMAT_VERSION, body, buckets, count);
    struct pi_summary s;
    uint64_t read[PI_BUCKET_COUNT];
    const char *error = first_record(&s, read);
    cr_assert(strstr(error, path) && strstr(error, "byte "), "file and offset named: '%s'", error);
    cr_assert(strstr(error, words), "expected '%s' in '%s'", words, error);
}

Test(summary_reader, absurd_summaries_are_errors)
{
    uint64_t good[2] = {PI_SUMMARY_BUCKET(pi_bucket_of(100), 1),
                        PI_SUMMARY_BUCKET(pi_bucket_of(200), 2)};
    assert_refused(waits_body(), good, 4, "do not add up");
    uint64_t beyond[2] = {good[0], PI_SUMMARY_BUCKET(PI_BUCKET_COUNT, 2)};
    assert_refused(waits_body(), beyond, 3, "do not decode");
    uint64_t falling[2] = {good[1], good[0]}; /* a step back reads as a step beyond the last */
    assert_refused(waits_body(), falling, 3, "do not decode");
    struct pi_summary_body b = waits_body();
    b.total_ns = 1u << 30; /* more than 3 times the maximum */
    assert_refused(b, good, 3, "total outside");
    b = waits_body();
    b.min_ns = 300;
    assert_refused(b, good, 3, "minimum above");
    b = waits_body();
    b.kind = PI_REC_STRING;
    assert_refused(b, good, 3, "never summarised");
    claimed_buckets = 40; /* says more buckets than the record's length holds */
    assert_refused(waits_body(), good, 3, "do not decode");
    claimed_buckets = 1; /* fewer: bytes left over */
    assert_refused(waits_body(), good, 3, "do not decode");
    claimed_buckets = 0;
}

Test(summary_reader, format_5_has_no_summaries)
{
    uint64_t buckets[2] = {PI_SUMMARY_BUCKET(pi_bucket_of(100), 1),
                           PI_SUMMARY_BUCKET(pi_bucket_of(200), 2)};
    file_with(5, waits_body(), buckets, 3);
    char error[700];
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    cr_assert(reader, "%s", error);
    struct pi_event ev;
    cr_assert_eq(pi_reader_next(reader, &ev), PI_READ_ERROR);
    cr_assert(strstr(pi_reader_error(reader), "unknown kind"), "%s", pi_reader_error(reader));
    pi_reader_close(reader);
}

Test(summary_reader, one_bucket_rule)
{
    /* the recorder's header and the analyzer's histogram agree on every bucket edge */
    for (uint32_t i = 0; i < PI_BUCKET_COUNT - 1; i++) {
        uint64_t low = pi_bucket_low(i), next = pi_bucket_low(i + 1);
        cr_assert_eq(pi_bucket_of(low), i);
        cr_assert_eq(pi_bucket_of(next - 1), i, "bucket %u ends before %llu", i,
                     (unsigned long long)next);
        double mid = pi_bucket_value(i);
        cr_assert(mid >= (double)low && mid <= (double)(next - 1));
        /* the documented error: the midpoint is within 1/128 of any value in the bucket */
        cr_assert(mid - (double)low <= PI_BUCKET_RELATIVE_ERROR * (double)low + 0.5);
    }
    cr_assert_eq(pi_bucket_of(UINT64_MAX), PI_BUCKET_COUNT - 1);
}
