/*
 * Unit: the reader against hand-made bad input. Every case is an error
 * naming the file and the byte offset, or (for a file cut short) the
 * records before the cut, or (for a damaged frame after the header) the
 * frames around it with the damage counted; never a crash.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "synthetic_trace.h"

static const char *path;

static void begin_file(void)
{
    path = synthetic_begin();
}

static size_t good_header(uint8_t *buf)
{
    return synthetic_header(buf, PI_FORMAT_VERSION);
}

/* Read the whole file; return the error message ("" when none) and count records. */
static const char *read_all(uint64_t *records)
{
    static char error[700];
    error[0] = '\0';
    *records = 0;
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    if (!reader)
        return error;
    struct pi_event ev;
    int got;
    while ((got = pi_reader_next(reader, &ev)) == PI_READ_EVENT)
        (*records)++;
    if (got == PI_READ_ERROR)
        snprintf(error, sizeof(error), "%s", pi_reader_error(reader));
    pi_reader_close(reader);
    return error;
}

static void assert_error_at(long offset, const char *words)
{
    uint64_t records;
    const char *error = read_all(&records);
    char where[200];
    snprintf(where, sizeof(where), "%s: byte %ld: ", path, offset);
    cr_assert(strncmp(error, where, strlen(where)) == 0, "expected '%s...', got '%s'", where, error);
    cr_assert(strstr(error, words), "expected '%s' in '%s'", words, error);
}

/* Read the whole file without an error; return what was skipped as damaged. */
static struct pi_reader_damage read_damaged(uint64_t *records)
{
    char error[700] = "";
    struct pi_reader_damage damage = {0, 0, 0, 0};
    *records = 0;
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    cr_assert(reader, "%s", error);
    struct pi_event ev;
    int got;
    while ((got = pi_reader_next(reader, &ev)) == PI_READ_EVENT)
        (*records)++;
    cr_assert_eq(got, PI_READ_END, "%s", pi_reader_error(reader));
    pi_reader_damage(reader, &damage);
    pi_reader_close(reader);
    return damage;
}

/* Overwrite @size bytes of the file at @offset with @byte. */
static void overwrite(long offset, int byte, size_t size)
{
    FILE *f = fopen(path, "r+b");
    fseek(f, offset, SEEK_SET);
    for (size_t i = 0; i < size; i++)
        fputc(byte, f);
    fclose(f);
}

static struct pi_record mark(uint64_t value)
{
    struct pi_record r = {PI_REC_MARK, 0, 1, 1000 + value, 0, {value, 0, 0}};
    return r;
}

Test(reader_input, empty_file)
{
    begin_file();
    synthetic_end();
    assert_error_at(0, "empty file");
}

Test(reader_input, foreign_file)
{
    begin_file();
    synthetic_raw("this is not a trace\n");
    synthetic_end();
    assert_error_at(0, "not a profinject trace file");
}

Test(reader_input, zstd_file_of_something_else)
{
    begin_file();
    synthetic_frame("hello, world, this is some zstd content", 39);
    synthetic_end();
    assert_error_at(0, "bad magic");
}

Test(reader_input, newer_version)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    ((struct pi_file_header *)header)->version = PI_FORMAT_VERSION + 1;
    begin_file();
    synthetic_frame(header, size);
    synthetic_end();
    assert_error_at(0, "newer");
}

Test(reader_input, short_header)
{
    uint8_t header[16384];
    good_header(header);
    begin_file();
    synthetic_frame(header, 20);
    synthetic_end();
    assert_error_at(0, "shorter");
}

Test(reader_input, header_size_lies)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    ((struct pi_file_header *)header)->header_size = (uint16_t)(size + 10);
    begin_file();
    synthetic_frame(header, size);
    synthetic_end();
    assert_error_at(0, "header size");
}

Test(reader_input, unknown_record_kind)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    struct pi_record records[3] = {mark(1), mark(2), mark(3)};
    records[2].kind = 999;
    begin_file();
    synthetic_frame(header, size);
    synthetic_records(records, 2);
    long offset = synthetic_records(records, 3);
    synthetic_end();
    assert_error_at(offset, "unknown kind 999");
}

/* A kind past the file's own format version: a span's host memory (16) in a version-15 file,
 * a span (15) in a version-14 one; each read where its version has it. */
Test(reader_input, a_kind_newer_than_its_files_version)
{
    static const struct {
        unsigned version;
        uint16_t kind;
        int known;
    } cases[] = {{15, PI_REC_SPAN_HOST_MEMORY, 0}, {15, PI_REC_SPAN_NOTE, 0},
                 {16, PI_REC_SPAN_HOST_MEMORY, 1}, {16, PI_REC_SPAN_NOTE, 1},
                 {14, PI_REC_SPAN, 0}, {15, PI_REC_SPAN, 1},
                 {13, PI_REC_WAIT_IN_FLIGHT, 0}, {14, PI_REC_WAIT_IN_FLIGHT, 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t header[16384];
        size_t size = synthetic_header(header, cases[i].version);
        struct pi_record records[2] = {mark(1), mark(2)};
        records[1].kind = cases[i].kind;
        begin_file();
        synthetic_frame(header, size);
        long offset = synthetic_records(records, 2);
        synthetic_end();
        uint64_t count;
        const char *error = read_all(&count);
        if (cases[i].known) {
            cr_assert_str_eq(error, "", "version %u, kind %u", cases[i].version, cases[i].kind);
            cr_assert_eq(count, 2);
        } else {
            char words[64];
            snprintf(words, sizeof(words), "unknown kind %u", cases[i].kind);
            assert_error_at(offset, words);
        }
    }
}

Test(reader_input, string_longer_than_its_frame)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    struct pi_record records[2] = {{PI_REC_STRING, 0, 0, 0, 0, {1, 500, 0}}, mark(1)};
    begin_file();
    synthetic_frame(header, size);
    long offset = synthetic_records(records, 2);
    synthetic_end();
    assert_error_at(offset, "does not fit");
}

Test(reader_input, string_id_out_of_range)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    struct pi_record records[2] = {{PI_REC_STRING, 0, 0, 0, 0, {1u << 30, 3, 0}}, mark(1)};
    memcpy(&records[1], "abc", 3);
    begin_file();
    synthetic_frame(header, size);
    long offset = synthetic_records(records, 2);
    synthetic_end();
    assert_error_at(offset, "string id");
}

Test(reader_input, missing_frame)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    struct pi_record records[1] = {mark(1)};
    begin_file();
    synthetic_frame(header, size);
    synthetic_records(records, 1);
    synthetic_skip_frame();
    synthetic_records(records, 1);
    synthetic_end();
    uint64_t count;
    struct pi_reader_damage damage = read_damaged(&count);
    cr_assert_eq(count, 2, "both frames read");
    cr_assert_eq(damage.frames, 1, "the frame the numbers skip is counted lost");
    cr_assert_eq(damage.bytes, 0);
}

/* A file whose one record frame has two zeroed records under a header
 * saying @records and @definitions; return that frame's offset. */
static long frame_of_two_saying(uint32_t records, uint32_t definitions)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    uint8_t raw[16 + 2 * PI_RECORD_SIZE] = {0};
    struct pi_frame_header fh = {PI_FRAME_MAGIC, records, 1, definitions};
    memcpy(raw, &fh, sizeof(fh));
    begin_file();
    synthetic_frame(header, size);
    long offset = synthetic_frame(raw, sizeof(raw));
    synthetic_end();
    return offset;
}

/* The lying frame is damage: skipped whole and counted, the file still read. */
static void assert_frame_skipped(long offset)
{
    uint64_t count;
    struct pi_reader_damage damage = read_damaged(&count);
    cr_assert_eq(count, 0);
    cr_assert_eq(damage.places, 1);
    cr_assert_eq(damage.first_offset, (uint64_t)offset);
    cr_assert_eq(damage.frames, 1);
}

Test(reader_input, record_count_lies)
{
    assert_frame_skipped(frame_of_two_saying(5, 0));
}

Test(reader_input, cut_at_every_offset, .timeout = 120)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    struct pi_record records[40];
    for (int i = 0; i < 40; i++)
        records[i] = mark((uint64_t)i);
    begin_file();
    synthetic_frame(header, size);
    for (int f = 0; f < 4; f++)
        synthetic_records(records + f * 10, 10);
    synthetic_end();
    FILE *whole = fopen(path, "rb");
    static uint8_t bytes[65536];
    size_t total = fread(bytes, 1, sizeof(bytes), whole);
    fclose(whole);
    uint64_t previous = 0;
    for (size_t cut = 0; cut < total; cut++) {
        FILE *part = fopen(path, "wb");
        fwrite(bytes, 1, cut, part);
        fclose(part);
        uint64_t count;
        const char *error = read_all(&count);
        if (*error) {
            cr_assert(strstr(error, "header") || strstr(error, "empty file"),
                      "cut at %zu: only a cut header is an error, got '%s'", cut, error);
            cr_assert_eq(count, 0);
        }
        cr_assert_geq(count, previous, "a longer prefix never yields fewer records");
        cr_assert_eq(count % 10, 0, "whole frames only");
        previous = count;
    }
    cr_assert_eq(previous, 30, "all but the last frame read from the longest cut");
}

Test(reader_input, definition_slots_lie)
{
    assert_frame_skipped(frame_of_two_saying(2, 3));
}

/* Three frames of ten records; their offsets and the file's size. */
static long three_frames(long offsets[4])
{
    uint8_t header[16384];
    size_t size = good_header(header);
    struct pi_record records[10];
    for (int i = 0; i < 10; i++)
        records[i] = mark((uint64_t)i);
    begin_file();
    synthetic_frame(header, size);
    for (int f = 0; f < 3; f++)
        offsets[f] = synthetic_records(records, 10);
    synthetic_end();
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    offsets[3] = ftell(f);
    fclose(f);
    return offsets[3];
}

Test(reader_input, a_frame_overwritten_in_the_middle_costs_that_frame_only)
{
    long at[4];
    three_frames(at);
    overwrite(at[1], 0xee, 16); /* its frame magic and header gone */
    uint64_t count;
    struct pi_reader_damage damage = read_damaged(&count);
    cr_assert_eq(count, 20, "the frames before and after are read");
    cr_assert_eq(damage.places, 1);
    cr_assert_eq(damage.first_offset, (uint64_t)at[1]);
    cr_assert_eq(damage.bytes, (uint64_t)(at[2] - at[1]), "exactly the damaged frame skipped");
    cr_assert_eq(damage.frames, 1);
}

Test(reader_input, bytes_between_frames_are_skipped_and_counted)
{
    uint8_t header[16384];
    size_t size = good_header(header);
    struct pi_record records[2] = {mark(1), mark(2)};
    begin_file();
    synthetic_frame(header, size);
    synthetic_records(records, 2);
    synthetic_raw("seventeen bytes!\n");
    synthetic_records(records, 2);
    synthetic_end();
    uint64_t count;
    struct pi_reader_damage damage = read_damaged(&count);
    cr_assert_eq(count, 4);
    cr_assert_eq(damage.bytes, 17);
    cr_assert_eq(damage.places, 1);
    cr_assert_eq(damage.frames, 0, "no frame of records is missing");
}
