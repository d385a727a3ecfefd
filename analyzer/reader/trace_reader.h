/*
 * trace_reader.h - streaming reader of one trace file.
 *
 * Reads frame by frame: memory is bounded by one frame and the string
 * table, however long the trace. Every problem with the input becomes an
 * error message naming the file and the byte offset; a file cut short is
 * read up to its last whole frame and flagged as truncated.
 */
#ifndef PI_TRACE_READER_H
#define PI_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profinject/trace_format.h"

struct pi_reader;

/* The file header in usable form. */
struct pi_trace_info {
    struct pi_file_header header;
    char *strings[PI_HDR_STRING_COUNT]; /* NUL-terminated copies */
    /* a fork child's (PI_HDR_INHERITED): ids below inherited_below are defined in its
     * parent's file, named parent_file (no directory); 0 and NULL otherwise */
    uint32_t inherited_below;
    const char *parent_file;
};

/* One record as the reader hands it out. */
struct pi_event {
    struct pi_record rec;
    uint64_t ts_ns;        /* start, CLOCK_MONOTONIC ns */
    uint64_t dur_ns;       /* duration in ns */
    uint64_t frame_offset; /* byte offset of the frame holding it */
    uint64_t index;        /* position among the file's records */
};

enum pi_read_result { PI_READ_ERROR = -1, PI_READ_END = 0, PI_READ_EVENT = 1 };

/**
 * pi_reader_open - open @path and read its header
 * @error: receives "PATH: byte N: what is wrong" on failure
 * @error_size: size of @error
 * Return: a reader, or NULL on failure.
 */
struct pi_reader *pi_reader_open(const char *path, char *error, size_t error_size);

void pi_reader_close(struct pi_reader *reader);

const struct pi_trace_info *pi_reader_info(const struct pi_reader *reader);

/**
 * pi_reader_next - the next record (string definitions included; their
 * continuation slots are consumed)
 * Return: PI_READ_EVENT, PI_READ_END, or PI_READ_ERROR with pi_reader_error set.
 */
int pi_reader_next(struct pi_reader *reader, struct pi_event *event);

/* pi_reader_error - message of the last PI_READ_ERROR */
const char *pi_reader_error(const struct pi_reader *reader);

/**
 * pi_reader_truncated - nonzero when the file ended inside a frame
 * @offset: receives the byte offset where the partial frame starts
 * @bytes: receives its size
 */
int pi_reader_truncated(const struct pi_reader *reader, uint64_t *offset, uint64_t *bytes);

/* What was skipped as damaged (frames that failed their checksum or structure). */
struct pi_reader_damage {
    uint64_t bytes, places, first_offset;
    uint64_t frames; /* frames of records lost (their sequence numbers tell) */
};

/* pi_reader_damage - fill @damage; nonzero when anything was skipped */
int pi_reader_damage(const struct pi_reader *reader, struct pi_reader_damage *damage);

/* pi_reader_warn_truncated - the standard warnings on @out (stderr, or a file's messages
 * kept for their turn) when the file was cut short */
void pi_reader_warn_truncated(FILE *out, const struct pi_reader *reader);

/**
 * pi_reader_inherit - a fork child's ids below its bound are looked up in @parent, a reader
 * of its parent's file that has read their definitions (lineage.h finds and loads it);
 * @parent must outlive @reader
 */
void pi_reader_inherit(struct pi_reader *reader, const struct pi_reader *parent);

/**
 * pi_reader_keep_definitions - done reading: release the file and the frame buffers,
 * keep what was defined for lookups
 */
void pi_reader_keep_definitions(struct pi_reader *reader);

/**
 * pi_reader_string - text of a string id seen so far
 * Return: NUL-terminated text, or NULL when the id was never defined (or
 * names a module or a stack).
 */
const char *pi_reader_string(const struct pi_reader *reader, uint64_t id);

/**
 * pi_reader_definition - the bytes of any id defined so far: a string, or
 * (format 2) a module or a stack
 * @kind: receives the record kind that defined it
 * @length: receives the length (the bytes are also NUL-terminated)
 * Return: the bytes, or NULL when the id was never defined.
 */
const void *pi_reader_definition(const struct pi_reader *reader, uint64_t id, unsigned *kind,
                                 uint32_t *length);

struct pi_summary;

/**
 * pi_reader_summary - the body of the record pi_reader_next just returned,
 * when it is a PI_REC_SUMMARY (format 6), checked; valid until the next call
 * Return: the summary, or NULL for any other record.
 */
const struct pi_summary *pi_reader_summary(const struct pi_reader *reader);

/* pi_reader_ticks_to_ns - convert clock ticks of this file into CLOCK_MONOTONIC ns */
uint64_t pi_reader_ticks_to_ns(const struct pi_reader *reader, uint64_t ticks);

/* pi_reader_path - the path the reader was opened with */
const char *pi_reader_path(const struct pi_reader *reader);

/* pi_reader_bytes_read - compressed bytes consumed so far */
uint64_t pi_reader_bytes_read(const struct pi_reader *reader);

/* pi_record_kind_name - printable name of a record kind, "unknown" otherwise */
const char *pi_record_kind_name(unsigned kind);

/* pi_io_op_name, pi_fd_class_name, pi_wait_kind_name - names of the enums in trace_format.h */
const char *pi_io_op_name(unsigned op);
const char *pi_fd_class_name(unsigned fd_class);
const char *pi_wait_kind_name(unsigned kind);
const char *pi_cuda_api_name(unsigned api);
const char *pi_gpu_copy_kind_name(unsigned kind);
const char *pi_gpu_alloc_kind_name(unsigned kind);

/* pi_errno_name - "ENOENT" for a failed call's errno (records keep -errno),
 * "E<number>" for one not in the table: @buf holds it (16 bytes) */
const char *pi_errno_name(int64_t error, char buf[16]);

#endif
