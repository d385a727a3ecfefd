/* trace_reader.c - streaming trace file reader (see trace_reader.h). */
#define ZSTD_STATIC_LINKING_ONLY
#include "trace_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "profinject/record_codec.h"
#include "frame_input.h"
#include "saturate.h"
#include "summary_record.h"
#include "profinject/histogram_buckets.h"
#include "trace_inputs.h"

#define MAX_HEADER_SIZE 65535u
#define MAX_FRAME_CONTENT (sizeof(struct pi_frame_header) + (size_t)PI_MAX_FRAME_RECORDS * PI_RECORD_SIZE)
/* The recorder's string table holds 65,536 (recorder.c); a damaged id far beyond would
 * have the reader grow, clear and walk a table of that size for every file (a fuzzed
 * input took 18 s). */
#define MAX_STRING_ID (1u << 20)
/* Refine the tick rate only from sync points this far apart. */
#define RATE_REFINE_MIN_NS 50000000u

struct definition {
    char *bytes; /* NUL-terminated copy */
    uint32_t length;
    uint16_t kind; /* PI_REC_STRING, PI_REC_MODULE or PI_REC_STACK */
};

struct pi_reader {
    char *path;
    struct pi_frame_input input;
    struct pi_trace_info info;

    /* current frame */
    uint8_t *raw;
    struct pi_record *records;
    uint32_t record_count, record_pos;
    uint64_t frame_offset;
    uint32_t frame_sequence;
    uint64_t record_index;
    uint64_t frames_lost;    /* by the gaps in the frames' sequence numbers */
    uint64_t frames_dropped; /* damaged since the last good frame (at the end: no gap tells) */

    /* clock mapping */
    uint64_t base_ticks, base_ns;
    double ticks_per_ns, ns_per_tick;

    /* strings, modules and stacks by id (one id space) */
    struct definition *strings;
    uint32_t string_capacity;
    const struct pi_reader *parent; /* a fork child's ids below info.inherited_below */

    struct pi_summary summary; /* of the last record, when a PI_REC_SUMMARY */
    uint64_t summary_words[PI_BUCKET_COUNT]; /* its buckets */
    int has_summary;
    char error[512];
};

#define fail(r, ...) pi_frame_input_fail(&(r)->input, __VA_ARGS__)

static char *copy_string(const void *bytes, size_t length)
{
    char *s = malloc(length + 1);
    if (s) {
        memcpy(s, bytes, length);
        s[length] = '\0';
    }
    return s;
}

/* PI_HDR_INHERITED: "BOUND FILE", or empty */
static int parse_inherited(struct pi_reader *r)
{
    const char *text = r->info.strings[PI_HDR_INHERITED];
    if (!text[0])
        return 0;
    char *end;
    unsigned long bound = strtoul(text, &end, 10);
    if (end == text || *end != ' ' || !end[1] || strchr(end + 1, '/') || bound < 2 ||
        bound > MAX_STRING_ID) {
        fail(r, 0, "the header's inherited ids are not \"BOUND FILE\": \"%.100s\"", text);
        return -1;
    }
    r->info.inherited_below = (uint32_t)bound;
    r->info.parent_file = end + 1;
    return 0;
}

static int parse_header(struct pi_reader *r, size_t size)
{
    struct pi_file_header *h = &r->info.header;
    if (size < PI_FILE_MAGIC_LEN || memcmp(r->raw, PI_FILE_MAGIC, PI_FILE_MAGIC_LEN) != 0) {
        fail(r, 0, "not a profinject trace (bad magic)");
        return -1;
    }
    /* the version and byte order come before any field that moved */
    size_t fixed = offsetof(struct pi_file_header, features);
    if (size < fixed) {
        fail(r, 0, "header is %zu bytes, too short for a version and byte order", size);
        return -1;
    }
    memset(h, 0, sizeof(*h));
    memcpy(h, r->raw, fixed);
    if (h->version >= 1 && h->version <= PI_FORMAT_VERSION)
        fixed = pi_header_fixed_size(h->version);
    if (size < fixed) {
        fail(r, 0, "header is %zu bytes, shorter than the %zu of format %u", size, fixed,
             h->version);
        return -1;
    }
    memcpy(h, r->raw, fixed);
    unsigned strings = pi_header_string_count(h->version);
    for (unsigned i = strings; i < PI_HDR_STRING_COUNT; i++)
        h->string_len[i] = 0; /* padding in older formats */
    if (h->endian != PI_ENDIAN_MARK) {
        fail(r, 0, "written with another byte order (mark 0x%08x)", h->endian);
        return -1;
    }
    if (h->version > PI_FORMAT_VERSION) {
        fail(r, 0, "format version %u is newer than this analyzer reads (%d); update profinject",
             h->version, PI_FORMAT_VERSION);
        return -1;
    }
    if (h->version == 0 || h->record_size != PI_RECORD_SIZE) {
        fail(r, 0, "unsupported format version %u / record size %u", h->version, h->record_size);
        return -1;
    }
    if (h->features != PI_CODEC_FEATURES && h->features != PI_CODEC_FEATURES_ALL_TRANSPOSED) {
        fail(r, 0, "unknown feature bits 0x%x", h->features);
        return -1;
    }
    size_t total = fixed;
    for (unsigned i = 0; i < strings; i++)
        total += h->string_len[i];
    if (h->header_size != size || total != size) {
        fail(r, 0, "header size %u does not match its contents (%zu) and frame (%zu)",
             h->header_size, total, size);
        return -1;
    }
    if (!(h->ticks_per_second > 1e6 && h->ticks_per_second < 1e12)) {
        fail(r, 0, "clock rate %g ticks/s is not plausible", h->ticks_per_second);
        return -1;
    }
    size_t at = fixed;
    for (int i = 0; i < PI_HDR_STRING_COUNT; i++) {
        r->info.strings[i] = copy_string(r->raw + at, h->string_len[i]);
        if (!r->info.strings[i]) {
            fail(r, 0, "out of memory");
            return -1;
        }
        at += h->string_len[i];
    }
    if (parse_inherited(r) != 0)
        return -1;
    r->base_ticks = h->start_ticks;
    r->base_ns = h->start_monotonic_ns;
    r->ticks_per_ns = h->ticks_per_second / 1e9;
    r->ns_per_tick = 1.0 / r->ticks_per_ns;
    return 0;
}

struct pi_reader *pi_reader_open(const char *path, char *error, size_t error_size)
{
    struct pi_reader *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(error, error_size, "%s: out of memory", path);
        return NULL;
    }
    r->path = strdup(path);
    r->input.dctx = ZSTD_createDCtx();
    r->raw = malloc(MAX_FRAME_CONTENT);
    r->records = malloc((size_t)PI_MAX_FRAME_RECORDS * sizeof(struct pi_record));
    if (!r->path || !r->input.dctx || !r->raw || !r->records) {
        snprintf(error, error_size, "%s: out of memory", path);
        pi_reader_close(r);
        return NULL;
    }
    r->input.path = r->path;
    r->input.error = r->error;
    r->input.error_size = sizeof(r->error);
    r->input.file = pi_open_trace_file(path, error, error_size);
    if (!r->input.file) {
        pi_reader_close(r);
        return NULL;
    }
    size_t size = 0;
    int got = pi_frame_input_next(&r->input, r->raw, MAX_HEADER_SIZE, &size, 0);
    if (got == 0)
        fail(r, 0, r->input.truncated ? "file ends inside its header frame" : "empty file");
    if (got != 1 || parse_header(r, size) != 0) {
        snprintf(error, error_size, "%s", r->error);
        pi_reader_close(r);
        return NULL;
    }
    return r;
}

void pi_reader_close(struct pi_reader *r)
{
    if (!r)
        return;
    if (r->input.file)
        fclose(r->input.file);
    ZSTD_freeDCtx(r->input.dctx);
    for (int i = 0; i < PI_HDR_STRING_COUNT; i++)
        free(r->info.strings[i]);
    for (uint32_t i = 0; i < r->string_capacity; i++)
        free(r->strings[i].bytes);
    free(r->strings);
    free(r->input.in);
    free(r->raw);
    free(r->records);
    free(r->path);
    free(r);
}

const struct pi_trace_info *pi_reader_info(const struct pi_reader *r)
{
    return &r->info;
}

const char *pi_reader_error(const struct pi_reader *r)
{
    return r->error;
}

const char *pi_reader_path(const struct pi_reader *r)
{
    return r->path;
}

uint64_t pi_reader_bytes_read(const struct pi_reader *r)
{
    return r->input.in_file_offset + r->input.in_start;
}

int pi_reader_truncated(const struct pi_reader *r, uint64_t *offset, uint64_t *bytes)
{
    if (offset)
        *offset = r->input.truncated_offset;
    if (bytes)
        *bytes = r->input.truncated_bytes;
    return r->input.truncated;
}

void pi_reader_warn_truncated(FILE *out, const struct pi_reader *r)
{
    if (r->input.truncated)
        fprintf(out,
                "profinject-analyze: %s: warning: file ends inside a frame at byte %" PRIu64
                " (%" PRIu64 " bytes ignored); records up to there were read\n",
                pi_reader_path(r), r->input.truncated_offset, r->input.truncated_bytes);
    struct pi_reader_damage d;
    if (pi_reader_damage(r, &d) && d.places)
        fprintf(out,
                "profinject-analyze: %s: warning: damaged data skipped: %" PRIu64
                " bytes in %" PRIu64 " places (the first at byte %" PRIu64 "), %" PRIu64
                " frames of records lost; the frames around them were read\n",
                pi_reader_path(r), d.bytes, d.places, d.first_offset, d.frames);
    else if (d.frames)
        fprintf(out,
                "profinject-analyze: %s: warning: %" PRIu64 " frames of records missing (the "
                "frames' numbers skip them); the others were read\n",
                pi_reader_path(r), d.frames);
}

int pi_reader_damage(const struct pi_reader *r, struct pi_reader_damage *damage)
{
    damage->bytes = r->input.damaged_bytes;
    damage->places = r->input.damaged_places;
    damage->first_offset = r->input.first_damage_offset;
    damage->frames = r->frames_lost + r->frames_dropped;
    return damage->places || damage->frames;
}

void pi_reader_inherit(struct pi_reader *r, const struct pi_reader *parent)
{
    r->parent = parent;
}

void pi_reader_keep_definitions(struct pi_reader *r)
{
    if (r->input.file)
        fclose(r->input.file);
    r->input.file = NULL;
    ZSTD_freeDCtx(r->input.dctx);
    r->input.dctx = NULL;
    free(r->input.in);
    free(r->raw);
    free(r->records);
    r->input.in = NULL;
    r->raw = NULL;
    r->records = NULL;
    r->record_count = r->record_pos = 0;
}

/* The definition of @id: this file's, else for an inherited id its parent's. */
static const struct definition *definition_of(const struct pi_reader *r, uint64_t id)
{
    for (; r; r = id < r->info.inherited_below ? r->parent : NULL)
        if (id < r->string_capacity && r->strings[id].bytes)
            return &r->strings[id];
    return NULL;
}

const char *pi_reader_string(const struct pi_reader *r, uint64_t id)
{
    const struct definition *d = definition_of(r, id);
    return d && d->kind == PI_REC_STRING ? d->bytes : NULL;
}

const void *pi_reader_definition(const struct pi_reader *r, uint64_t id, unsigned *kind,
                                 uint32_t *length)
{
    const struct definition *d = definition_of(r, id);
    if (!d)
        return NULL;
    *kind = d->kind;
    *length = d->length;
    return d->bytes;
}

uint64_t pi_reader_ticks_to_ns(const struct pi_reader *r, uint64_t ticks)
{
    double delta = (double)(int64_t)(ticks - r->base_ticks) * r->ns_per_tick;
    return r->base_ns + (uint64_t)saturate_i64(delta);
}

/* Whether the frame just decompressed holds together: a frame that does not is damage,
 * skipped (its own checksum held, or it had none: an older file or a damaged flag). */
static int frame_holds(struct pi_reader *r, size_t size, struct pi_frame_header *fh)
{
    if (size < sizeof(*fh))
        return 0;
    memcpy(fh, r->raw, sizeof(*fh));
    int rows = (r->info.header.features & PI_FEATURE_DEFINITION_ROWS) != 0;
    if (fh->magic != PI_FRAME_MAGIC || fh->record_count > PI_MAX_FRAME_RECORDS ||
        size != sizeof(*fh) + (size_t)fh->record_count * PI_RECORD_SIZE ||
        fh->definition_slots > (rows ? fh->record_count : 0) || fh->sequence <= r->frame_sequence)
        return 0;
    /* the frames its number skips were lost, those dropped since the last good one among them */
    r->frames_lost += fh->sequence - r->frame_sequence - 1;
    r->frames_dropped = 0;
    return 1;
}

static int load_record_frame(struct pi_reader *r)
{
    size_t size;
    struct pi_frame_header fh;
    for (;;) {
        int got = pi_frame_input_next(&r->input, r->raw, MAX_FRAME_CONTENT, &size, 1);
        if (got != 1)
            return got;
        r->frame_offset = r->input.frame_offset;
        if (frame_holds(r, size, &fh))
            break;
        pi_frame_input_damaged(&r->input);
        r->frames_dropped++;
    }
    r->frame_sequence = fh.sequence;
    pi_codec_decode_frame(r->raw + sizeof(fh), fh.record_count, fh.definition_slots, r->records);
    r->record_count = fh.record_count;
    r->record_pos = 0;
    return 1;
}

static int define_string(struct pi_reader *r, const struct pi_record *rec)
{
    uint64_t id = rec->arg[0], length = rec->arg[1];
    uint32_t slots = pi_string_slots(length);
    if (id == 0 || id >= MAX_STRING_ID || length > PI_MAX_STRING_LEN ||
        slots > r->record_count - r->record_pos - 1) {
        fail(r, r->frame_offset, "record %u: %s id %llu of length %llu does not fit the frame",
             r->record_pos, pi_record_kind_name(rec->kind), (unsigned long long)id,
             (unsigned long long)length);
        return -1;
    }
    if (id >= r->string_capacity) {
        uint32_t capacity = r->string_capacity ? r->string_capacity : 256;
        while (capacity <= id)
            capacity *= 2;
        struct definition *grown = realloc(r->strings, sizeof(*grown) * capacity);
        if (!grown) {
            fail(r, r->frame_offset, "out of memory");
            return -1;
        }
        memset(grown + r->string_capacity, 0, sizeof(*grown) * (capacity - r->string_capacity));
        r->strings = grown;
        r->string_capacity = capacity;
    }
    char *text = copy_string(&r->records[r->record_pos + 1], length);
    if (!text) {
        fail(r, r->frame_offset, "out of memory");
        return -1;
    }
    free(r->strings[id].bytes);
    r->strings[id] = (struct definition){text, (uint32_t)length, rec->kind};
    return 0;
}

/* A new sync point: map ticks from here, and refine the rate over the whole run. */
static void apply_clock_sync(struct pi_reader *r, const struct pi_record *rec)
{
    const struct pi_file_header *h = &r->info.header;
    uint64_t mono = rec->arg[0];
    if (rec->ts > h->start_ticks && mono > h->start_monotonic_ns + RATE_REFINE_MIN_NS)
    {
        r->ticks_per_ns = (double)(rec->ts - h->start_ticks) / (double)(mono - h->start_monotonic_ns);
        r->ns_per_tick = 1.0 / r->ticks_per_ns;
    }
    r->base_ticks = rec->ts;
    r->base_ns = mono;
}

const struct pi_summary *pi_reader_summary(const struct pi_reader *r)
{
    return r->has_summary ? &r->summary : NULL;
}

int pi_reader_next(struct pi_reader *r, struct pi_event *ev)
{
    if (!r->raw) /* pi_reader_keep_definitions */
        return PI_READ_END;
    while (r->record_pos >= r->record_count) {
        int got = load_record_frame(r);
        if (got <= 0)
            return got < 0 ? PI_READ_ERROR : PI_READ_END;
    }
    const struct pi_record *rec = &r->records[r->record_pos];
    if (rec->kind == PI_REC_INVALID || rec->kind >= pi_kinds_of_version(r->info.header.version)) {
        fail(r, r->frame_offset, "record %u has unknown kind %u", r->record_pos, rec->kind);
        return PI_READ_ERROR;
    }
    uint32_t consumed = pi_record_slots(rec); /* its length is checked below where it has one */
    r->has_summary = 0;
    if (rec->kind == PI_REC_SUMMARY) { /* checked here, so no report sees an absurd one */
        const char *why;
        if (pi_summary_parse(rec, r->record_count - r->record_pos - 1, r->info.header.version,
                             r->summary_words, &r->summary, &why) != 0) {
            fail(r, r->frame_offset, "record %u: %s", r->record_pos, why);
            return PI_READ_ERROR;
        }
        r->has_summary = 1;
    } else if (pi_record_is_definition(rec->kind)) {
        if (define_string(r, rec) != 0)
            return PI_READ_ERROR;
    } else if (rec->kind == PI_REC_CLOCK_SYNC) {
        apply_clock_sync(r, rec);
    }
    ev->rec = *rec;
    ev->ts_ns = pi_reader_ticks_to_ns(r, rec->ts);
    ev->dur_ns = saturate_u64((double)rec->dur * r->ns_per_tick);
    ev->frame_offset = r->frame_offset;
    ev->index = r->record_index++;
    r->record_pos += consumed;
    return PI_READ_EVENT;
}
