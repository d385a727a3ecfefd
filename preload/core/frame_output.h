/*
 * frame_output.h - staged records to trace frames: the writer thread's
 * staging area, encoding, compression and the appends to the trace file.
 */
#ifndef PI_FRAME_OUTPUT_H
#define PI_FRAME_OUTPUT_H

#include "recorder_internal.h"

#define STAGING_RECORDS 16384u
#define HEADER_CAPACITY 16384u

/* pi_writer_allocate - the writer's buffers and compression context; 0 or -1 */
int pi_writer_allocate(struct pi_writer *w);

/* pi_writer_write_frame - compress @raw_len bytes of @raw into one frame and append it;
 * @sequence: the record frame's number, 0 for the header */
void pi_writer_write_frame(struct pi_writer *w, const void *raw, size_t raw_len, uint32_t sequence);

/* pi_writer_flush_staging - encode and write the staged records as one frame */
void pi_writer_flush_staging(struct pi_writer *w);

/* pi_writer_stage - room for @slots more records, writing a frame first if needed */
struct pi_record *pi_writer_stage(struct pi_writer *w, uint32_t slots);

/* pi_writer_stage_definition - stage the definition of string, module or stack @id */
void pi_writer_stage_definition(struct pi_writer *w, uint32_t id);

/* pi_writer_stage_new_definitions - stage every definition made since the last call (quiet
 * strings held back: string_table.h), in frames of a bounded size */
void pi_writer_stage_new_definitions(struct pi_writer *w);

/* pi_writer_check_not_removed - once a second: a trace file removed while
 * recording is said once, and the writer stops */
void pi_writer_check_not_removed(struct pi_writer *w, uint64_t now);

#endif
