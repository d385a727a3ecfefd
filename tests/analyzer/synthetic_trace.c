/* synthetic_trace.c - hand-written trace files (see synthetic_trace.h). */
#include "synthetic_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/trace_file.h"
#include "helpers.h"
#include "profinject/record_codec.h"

static char path[128];
static FILE *out;
static uint32_t sequence;

const char *synthetic_begin(void)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/t.pitrace.zst", dir);
    out = fopen(path, "wb");
    sequence = 0;
    return path;
}

long synthetic_frame(const void *raw, size_t size)
{
    long offset = ftell(out);
    size_t bound = ZSTD_compressBound(size);
    void *compressed = malloc(bound);
    size_t n = ZSTD_compress(compressed, bound, raw, size, 3);
    if (ZSTD_isError(n))
        abort(); /* the test's own input is broken */
    fwrite(compressed, 1, n, out);
    free(compressed);
    return offset;
}

size_t synthetic_header(uint8_t *header, uint16_t version)
{
    struct pi_header_clock clock = {PI_CLOCK_MONOTONIC, 1, 1000, 1000, 1e9, 100000000, 0, 0, 0, NULL};
    size_t size = pi_trace_header_build(header, 16384, &clock);
    struct pi_file_header h;
    memcpy(&h, header, sizeof(h));
    /* an older format: its own fixed size and strings, as that version wrote them */
    size_t old_fixed = pi_header_fixed_size(version), new_fixed = sizeof(h);
    size_t kept = 0;
    for (unsigned i = 0; i < pi_header_string_count(version); i++)
        kept += h.string_len[i];
    memmove(header + old_fixed, header + new_fixed, kept);
    for (unsigned i = pi_header_string_count(version); i < PI_HDR_STRING_COUNT; i++)
        h.string_len[i] = 0;
    h.version = version;
    h.header_size = (uint16_t)(old_fixed + kept);
    memcpy(header, &h, old_fixed);
    (void)size;
    return old_fixed + kept;
}

long synthetic_records(const struct pi_record *records, uint32_t count)
{
    size_t size = sizeof(struct pi_frame_header) + (size_t)count * PI_RECORD_SIZE;
    uint8_t *raw = malloc(size);
    struct pi_frame_header fh = {PI_FRAME_MAGIC, count, ++sequence, 0};
    memcpy(raw, &fh, sizeof(fh));
    pi_codec_encode(records, count, raw + sizeof(fh));
    long offset = synthetic_frame(raw, size);
    free(raw);
    return offset;
}

uint32_t synthetic_definition(struct pi_record *records, uint32_t at, uint16_t kind, uint32_t id,
                              const void *bytes, uint32_t length)
{
    uint32_t slots = pi_string_slots(length);
    memset(&records[at], 0, sizeof(*records) * (1 + slots));
    records[at].kind = kind;
    records[at].arg[0] = id;
    records[at].arg[1] = length;
    memcpy(&records[at + 1], bytes, length);
    return 1 + slots;
}

void synthetic_raw(const char *text)
{
    fputs(text, out);
}

void synthetic_skip_frame(void)
{
    sequence++;
}

void synthetic_end(void)
{
    fclose(out);
}
