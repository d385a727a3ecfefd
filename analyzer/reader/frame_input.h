/*
 * frame_input.h - the zstd frames of one trace file, one at a time, with the
 * damaged stretches between them skipped. Frames are independent: a bit flipped
 * or a block overwritten in the middle of a file costs the frames it touched,
 * not the file. A frame whose zstd checksum (written since the recorder sets
 * it; older files have none) or structure does not hold is skipped to the next
 * frame magic whose frame is whole, and the bytes skipped are counted.
 */
#ifndef PI_FRAME_INPUT_H
#define PI_FRAME_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ZSTD_DCtx_s;

struct pi_frame_input {
    const char *path;
    FILE *file;
    struct ZSTD_DCtx_s *dctx;
    char *error; /* "PATH: byte N: what", error_size bytes */
    size_t error_size;

    /* compressed input window: in[in_start, in_end) is at file offset in_file_offset + in_start */
    uint8_t *in;
    size_t in_capacity, in_start, in_end;
    uint64_t in_file_offset;
    int eof;

    uint64_t frame_offset; /* of the frame last returned */
    size_t frame_size;     /* its compressed size */

    int truncated; /* the file ends inside a frame */
    uint64_t truncated_offset, truncated_bytes;

    uint64_t damaged_bytes, damaged_places, first_damage_offset;
    uint64_t damage_end; /* where the last skip ended: damage right there is the same place */
};

/**
 * pi_frame_input_next - decompress the next frame into @raw (at most @max_content bytes)
 * @skip_damage: skip what is not a good frame up to the next one (else it is an error)
 * Return: 1 with *@size set, 0 at the end (a frame cut short at the end is flagged
 * truncated), -1 on an error (in @in->error).
 */
int pi_frame_input_next(struct pi_frame_input *in, void *raw, size_t max_content, size_t *size,
                        int skip_damage);

/* pi_frame_input_damaged - count the frame last returned as damaged (its contents do not
 * hold together) */
void pi_frame_input_damaged(struct pi_frame_input *in);

/* pi_frame_input_fail - "PATH: byte OFFSET: what" into the error */
void pi_frame_input_fail(struct pi_frame_input *in, uint64_t offset, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#endif
