/*
 * synthetic_trace.h - trace files written by hand for the reader and
 * analyzer tests: a header frame, then frames of chosen records, each its
 * own zstd frame as the recorder writes them.
 */
#ifndef PI_SYNTHETIC_TRACE_H
#define PI_SYNTHETIC_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "profinject/trace_format.h"

/* synthetic_begin - start a new file in a fresh directory; its path */
const char *synthetic_begin(void);

/* synthetic_frame - append @size raw bytes as one zstd frame; its byte offset */
long synthetic_frame(const void *raw, size_t size);

/* synthetic_header - write a valid header of format @version; its size in @header */
size_t synthetic_header(uint8_t *header, uint16_t version);

/* synthetic_records - append @count records as the next record frame; its byte offset */
long synthetic_records(const struct pi_record *records, uint32_t count);

/* synthetic_definition - @kind (string, module, stack) @id of @length bytes into
 * @records at @at, continuation slots included; the slots used */
uint32_t synthetic_definition(struct pi_record *records, uint32_t at, uint16_t kind, uint32_t id,
                              const void *bytes, uint32_t length);

/* synthetic_raw - append @text as it is, in no frame */
void synthetic_raw(const char *text);

/* synthetic_skip_frame - number the next record frame as if one had been lost */
void synthetic_skip_frame(void);

/* synthetic_end - close the file */
void synthetic_end(void);

#endif
