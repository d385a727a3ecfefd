/* frame_input.c - zstd frames of a trace file, damage skipped (see frame_input.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#define ZSTD_STATIC_LINKING_ONLY
#include "frame_input.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#define READ_CHUNK (1u << 20)
#define MAX_FRAME_COMPRESSED (64u << 20)
#define FRAME_MAGIC_BYTES "\x28\xb5\x2f\xfd" /* ZSTD_MAGICNUMBER, little-endian */

void pi_frame_input_fail(struct pi_frame_input *f, uint64_t offset, const char *format, ...)
{
    char what[400];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof(what), format, args);
    va_end(args);
    snprintf(f->error, f->error_size, "%s: byte %llu: %s", f->path, (unsigned long long)offset,
             what);
}

/* Make sure at least @want bytes are buffered (fewer only at end of file). */
static int fill(struct pi_frame_input *f, size_t want)
{
    while (f->in_end - f->in_start < want && !f->eof) {
        if (f->in_start > 0) {
            memmove(f->in, f->in + f->in_start, f->in_end - f->in_start);
            f->in_file_offset += f->in_start;
            f->in_end -= f->in_start;
            f->in_start = 0;
        }
        size_t need = want > READ_CHUNK ? want : READ_CHUNK;
        if (f->in_capacity < need + READ_CHUNK) {
            uint8_t *grown = realloc(f->in, need + READ_CHUNK);
            if (!grown) {
                pi_frame_input_fail(f, f->in_file_offset, "out of memory");
                return -1;
            }
            f->in = grown;
            f->in_capacity = need + READ_CHUNK;
        }
        size_t n = fread(f->in + f->in_end, 1, f->in_capacity - f->in_end, f->file);
        f->in_end += n;
        if (n == 0) {
            if (ferror(f->file)) {
                pi_frame_input_fail(f, f->in_file_offset + f->in_end, "read error: %s",
                                    strerror(errno));
                return -1;
            }
            f->eof = 1;
        }
    }
    return 0;
}

static uint64_t position(const struct pi_frame_input *f)
{
    return f->in_file_offset + f->in_start;
}

/*
 * Whether a whole frame starts @at bytes past in_start, reading more as it needs:
 * 1 with its compressed size in *@csize, 0 if not (or not before the end), -1 on error.
 */
static int whole_frame_at(struct pi_frame_input *f, size_t at, size_t *csize)
{
    size_t want = at + 32;
    for (;;) {
        if (fill(f, want) != 0)
            return -1;
        size_t avail = f->in_end - f->in_start;
        if (avail <= at)
            return 0;
        *csize = ZSTD_findFrameCompressedSize(f->in + f->in_start + at, avail - at);
        if (!ZSTD_isError(*csize))
            return 1;
        if (ZSTD_getErrorCode(*csize) != ZSTD_error_srcSize_wrong || f->eof ||
            avail - at >= MAX_FRAME_COMPRESSED)
            return 0;
        want = at + (avail - at) * 2;
    }
}

/*
 * Skip from the damaged frame at in_start to the next frame magic that starts a whole
 * frame. Return 1 when one was found (in_start is there), 0 when none is left (all
 * skipped, or the file's tail flagged truncated where it was a frame cut short), -1.
 */
static int skip_to_next_frame(struct pi_frame_input *f, int cut_short)
{
    uint64_t from = position(f);
    size_t at = 1;
    int found = 0;
    for (;;) {
        if (fill(f, at + 4) != 0)
            return -1;
        size_t avail = f->in_end - f->in_start;
        const uint8_t *window = f->in + f->in_start;
        const uint8_t *magic = avail >= at + 4 ? memmem(window + at, avail - at, FRAME_MAGIC_BYTES, 4)
                                               : NULL;
        if (!magic) {
            if (f->eof)
                break;
            f->in_start += avail - 3; /* read on; a magic may straddle */
            at = 0;
            continue;
        }
        at = (size_t)(magic - window);
        size_t csize;
        int whole = whole_frame_at(f, at, &csize);
        if (whole < 0)
            return -1;
        if (whole) {
            found = 1;
            f->in_start += at;
            break;
        }
        at++;
    }
    if (!found && cut_short) {
        /* nothing whole after it: the end of a file cut short, as before */
        f->truncated = 1;
        f->truncated_offset = from;
        f->truncated_bytes = f->in_file_offset + f->in_end - from;
        f->in_start = f->in_end;
        return 0;
    }
    if (!found)
        f->in_start = f->in_end;
    uint64_t to = position(f);
    if (f->damage_end != from || !f->damaged_places) {
        if (!f->damaged_places)
            f->first_damage_offset = from;
        f->damaged_places++;
    }
    f->damaged_bytes += to - from;
    f->damage_end = to;
    return found;
}

void pi_frame_input_damaged(struct pi_frame_input *f)
{
    if (f->damage_end != f->frame_offset || !f->damaged_places) {
        if (!f->damaged_places)
            f->first_damage_offset = f->frame_offset;
        f->damaged_places++;
    }
    f->damaged_bytes += f->frame_size;
    f->damage_end = f->frame_offset + f->frame_size;
}

/* Decompress the frame of @csize bytes at in_start; 1, or 0 with @why set when it does not
 * hold (its content size, its blocks or its checksum). */
static int decompress(struct pi_frame_input *f, size_t csize, void *raw, size_t max_content,
                      size_t *size, char *why, size_t why_size)
{
    const uint8_t *src = f->in + f->in_start;
    unsigned long long content = ZSTD_getFrameContentSize(src, csize);
    if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR ||
        content > max_content) {
        snprintf(why, why_size, "frame content size %s (at most %zu expected)",
                 content == ZSTD_CONTENTSIZE_UNKNOWN ? "not stated" : "out of range", max_content);
        return 0;
    }
    size_t n = ZSTD_decompressDCtx(f->dctx, raw, max_content, src, csize);
    if (ZSTD_isError(n) || n != content) {
        snprintf(why, why_size, "corrupt zstd frame (%s)",
                 ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
        return 0;
    }
    *size = n;
    return 1;
}

int pi_frame_input_next(struct pi_frame_input *f, void *raw, size_t max_content, size_t *size,
                        int skip_damage)
{
    for (;;) {
        size_t want = 32;
        char why[200];
        int cut_short = 0;
        size_t csize = 0;
        for (;;) {
            if (fill(f, want) != 0)
                return -1;
            size_t avail = f->in_end - f->in_start;
            if (avail == 0)
                return 0;
            csize = ZSTD_findFrameCompressedSize(f->in + f->in_start, avail);
            if (!ZSTD_isError(csize))
                break;
            if (ZSTD_getErrorCode(csize) != ZSTD_error_srcSize_wrong) {
                if (position(f))
                    snprintf(why, sizeof(why), "not a zstd frame (%s)", ZSTD_getErrorName(csize));
                else
                    snprintf(why, sizeof(why),
                             "not a profinject trace file: it does not begin with a zstd frame");
                csize = 0;
                break;
            }
            if (f->eof) {
                cut_short = 1;
                csize = 0;
                break;
            }
            if (avail >= MAX_FRAME_COMPRESSED) {
                snprintf(why, sizeof(why), "frame larger than %u bytes", MAX_FRAME_COMPRESSED);
                csize = 0;
                break;
            }
            want = avail * 2;
        }
        if (cut_short && !skip_damage) {
            f->truncated = 1;
            f->truncated_offset = position(f);
            f->truncated_bytes = f->in_end - f->in_start;
            f->in_start = f->in_end;
            return 0;
        }
        if (csize && decompress(f, csize, raw, max_content, size, why, sizeof(why))) {
            f->frame_offset = position(f);
            f->frame_size = csize;
            f->in_start += csize;
            return 1;
        }
        if (!skip_damage) {
            pi_frame_input_fail(f, position(f), "%s", why);
            return -1;
        }
        int found = skip_to_next_frame(f, cut_short);
        if (found <= 0)
            return found;
    }
}
