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
