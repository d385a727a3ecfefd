/*
 * fuzz_trace_records - libFuzzer target below the compression: the input
 * is the decompressed content of a trace (a 2-byte header length, the
 * header, then frames); each part is compressed into its own zstd frame as
 * the writer would, so mutations reach the header and record checks
 * instead of dying in zstd. Seeds: tools/fuzz turns real traces into this.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "fuzz_common.h"
#include "profinject/trace_format.h"

static void put_frame(int fd, const uint8_t *content, size_t size)
{
    size_t bound = ZSTD_compressBound(size);
    void *out = malloc(bound);
    size_t n = ZSTD_compress(out, bound, content, size, 1);
    if (!ZSTD_isError(n) && write(fd, out, n) != (ssize_t)n)
        n = 0;
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t header = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2;
    size -= 2;
    if (header > size)
        header = size;
    int fd = memfd_create("trace", 0);
    if (fd < 0)
        return 0;
    put_frame(fd, data, header);
    /* frames: a frame header says how many records follow */
    for (size_t at = header; at < size;) {
        size_t length = size - at;
        if (length >= sizeof(struct pi_frame_header)) {
            struct pi_frame_header fh;
            memcpy(&fh, data + at, sizeof(fh));
            size_t claimed = sizeof(fh) + (size_t)fh.record_count * PI_RECORD_SIZE;
            if (fh.record_count <= PI_MAX_FRAME_RECORDS && claimed < length)
                length = claimed;
        }
        put_frame(fd, data + at, length);
        at += length;
    }
    pi_fuzz_analyse_fd(fd);
    close(fd);
    return 0;
}
