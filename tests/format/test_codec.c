/* Unit: the frame codec is exactly reversible for every record kind. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "profinject/record_codec.h"

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

Test(codec, round_trip_every_kind)
{
    enum { N = 5000 };
    static struct pi_record in[N], out[N];
    static uint8_t encoded[N * PI_RECORD_SIZE];
    uint64_t ts = 1000;
    for (size_t i = 0; i < N; i++) {
        in[i].kind = (uint16_t)(1 + i % (PI_REC_KIND_COUNT - 1));
        in[i].flags = (uint16_t)next_random();
        in[i].tid = (uint32_t)next_random();
        /* mostly rising timestamps, some going back (nested events), some huge */
        ts += i % 7 == 0 ? -(uint64_t)(next_random() % 500) : next_random() % 100000;
        in[i].ts = i % 97 == 0 ? next_random() : ts;
        in[i].dur = next_random();
        for (int a = 0; a < 3; a++)
            in[i].arg[a] = next_random();
    }
    pi_codec_encode(in, N, encoded);
    cr_assert(memcmp(encoded, in, sizeof(encoded)) != 0, "encoding changes the layout");
    pi_codec_decode(encoded, N, out);
    cr_assert_arr_eq(out, in, sizeof(in));
}

Test(codec, single_and_empty_frames)
{
    struct pi_record one = {PI_REC_MARK, 0, 42, 123456789, 5, {1, 2, 3}}, back;
    uint8_t encoded[PI_RECORD_SIZE];
    pi_codec_encode(&one, 1, encoded);
    pi_codec_decode(encoded, 1, &back);
    cr_assert_arr_eq(&back, &one, sizeof(one));
    pi_codec_encode(&one, 0, encoded); /* must not touch anything */
}

Test(codec, string_slots)
{
    cr_assert_eq(pi_string_slots(0), 0);
    cr_assert_eq(pi_string_slots(1), 1);
    cr_assert_eq(pi_string_slots(PI_RECORD_SIZE), 1);
    cr_assert_eq(pi_string_slots(PI_RECORD_SIZE + 1), 2);
    cr_assert_eq(pi_string_slots(PI_MAX_STRING_LEN), (PI_MAX_STRING_LEN + PI_RECORD_SIZE - 1) / PI_RECORD_SIZE);
}

Test(codec, layout_is_the_documented_one)
{
    /* an independent, naive statement of the format: gaps to the previous
     * end in ts, then byte b of record i at b * n + i */
    enum { N = 1000 };
    static struct pi_record in[N], delta[N];
    static uint8_t encoded[N * PI_RECORD_SIZE], expected[N * PI_RECORD_SIZE];
    for (size_t i = 0; i < N; i++) {
        in[i].kind = (uint16_t)next_random();
        in[i].tid = (uint32_t)next_random();
        in[i].ts = next_random();
        in[i].dur = next_random() % 100000;
        in[i].arg[0] = next_random();
        in[i].arg[2] = next_random();
    }
    for (size_t i = 0; i < N; i++) {
        delta[i] = in[i];
        delta[i].ts = in[i].ts - (i ? in[i - 1].ts + in[i - 1].dur : 0);
    }
    for (size_t i = 0; i < N; i++)
        for (size_t b = 0; b < PI_RECORD_SIZE; b++)
            expected[b * N + i] = ((const uint8_t *)&delta[i])[b];
    pi_codec_encode(in, N, encoded);
    cr_assert_arr_eq(encoded, expected, sizeof(expected));
}

/* A frame of events with strings, stacks and summaries between them, as the
 * writer stages it: @defs receives how many slots are definitions. */
static size_t staged_frame(struct pi_record *in, size_t capacity, size_t *defs)
{
    size_t n = 0;
    *defs = 0;
    for (uint64_t k = 0; n + 12 < capacity; k++) {
        uint16_t kind = k % 5 == 1 ? PI_REC_STRING : k % 5 == 3 ? PI_REC_STACK
                                   : k % 7 == 4 ? PI_REC_SUMMARY : PI_REC_IO;
        struct pi_record *r = &in[n];
        memset(r, 0, sizeof(*r));
        r->kind = kind;
        r->tid = 7;
        r->ts = 1000 * k;
        r->dur = 40;
        r->arg[0] = k;
        uint64_t length = pi_record_has_continuation(kind) ? 1 + next_random() % 500 : 0;
        r->arg[1] = pi_record_has_continuation(kind) ? length : next_random();
        for (uint32_t s = 0; s < pi_string_slots(length); s++)
            for (size_t b = 0; b < PI_RECORD_SIZE; b++)
                ((uint8_t *)&in[n + 1 + s])[b] = (uint8_t)('a' + (k + s + b) % 26);
        size_t slots = 1 + (pi_record_has_continuation(kind) ? pi_string_slots(length) : 0);
        if (pi_record_is_definition(kind))
            *defs += slots;
        n += slots;
    }
    return n;
}

Test(codec, definitions_are_rows_after_the_rest)
{
    enum { N = 4000 };
    static struct pi_record in[N], events[N], out[N], expected_events[N];
    static uint8_t encoded[N * PI_RECORD_SIZE], expected[N * PI_RECORD_SIZE];
    size_t defs;
    size_t n = staged_frame(in, N, &defs);
    cr_assert(defs > 0 && defs < n);
    cr_assert_eq(pi_codec_encode_frame(in, n, events, encoded), defs);
    /* independently: the other records (summaries with their slots) in order,
     * encoded as before; then every definition's slots byte for byte */
    size_t count = 0, rows = 0;
    for (size_t i = 0; i < n;) {
        size_t slots = 1 + (pi_record_has_continuation(in[i].kind)
                                ? pi_string_slots(in[i].arg[1])
                                : 0);
        if (pi_record_is_definition(in[i].kind)) {
            memcpy(expected + (n - defs + rows) * PI_RECORD_SIZE, &in[i], slots * PI_RECORD_SIZE);
            rows += slots;
        } else {
            memcpy(&expected_events[count], &in[i], slots * PI_RECORD_SIZE);
            count += slots;
        }
        i += slots;
    }
    cr_assert_eq(count + rows, n);
    pi_codec_encode(expected_events, count, expected);
    cr_assert_arr_eq(encoded, expected, n * PI_RECORD_SIZE);
    /* decoded: the definitions first, then the rest in their order */
    pi_codec_decode_frame(encoded, n, defs, out);
    cr_assert_arr_eq(out, expected + (n - defs) * PI_RECORD_SIZE, defs * PI_RECORD_SIZE);
    cr_assert_arr_eq(out + defs, expected_events, count * PI_RECORD_SIZE);
}

Test(codec, frame_without_definitions_is_the_old_encoding)
{
    enum { N = 300 };
    static struct pi_record in[N], events[N], out[N];
    static uint8_t encoded[N * PI_RECORD_SIZE], old[N * PI_RECORD_SIZE];
    for (size_t i = 0; i < N; i++) {
        memset(&in[i], 0, sizeof(in[i]));
        in[i].kind = PI_REC_WAIT;
        in[i].ts = 100 * i;
        in[i].arg[0] = next_random();
    }
    cr_assert_eq(pi_codec_encode_frame(in, N, events, encoded), 0);
    pi_codec_encode(in, N, old);
    cr_assert_arr_eq(encoded, old, sizeof(old));
    pi_codec_decode_frame(encoded, N, 0, out);
    cr_assert_arr_eq(out, in, sizeof(in));
}
