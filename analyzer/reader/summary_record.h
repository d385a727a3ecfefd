/*
 * summary_record.h - the body of a PI_REC_SUMMARY (format 6) checked and
 * handed out: what the recorder aggregated in summary mode.
 */
#ifndef PI_SUMMARY_RECORD_H
#define PI_SUMMARY_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "profinject/trace_format.h"

/* A summary as the reader hands it out, valid until the next record. */
struct pi_summary {
    struct pi_summary_body body;
    uint64_t count;          /* records it stands for (the record's arg0) */
    const uint64_t *buckets; /* body.bucket_count PI_SUMMARY_BUCKET words */
};

/**
 * pi_summary_parse - check a PI_REC_SUMMARY and the slots that follow it
 * @rec: the record; its arg1 bytes follow in continuation slots
 * @slots_left: how many slots of the frame follow @rec
 * @version: the file's format version (from 12, buckets are bytes: summary_buckets.h)
 * @words: room for PI_BUCKET_COUNT words, which receive the buckets
 * @out: receives the summary (its buckets point to @words)
 * @why: receives what is wrong, on failure
 *
 * Fuzzed input: the body must fit the frame, the kind must be one that is
 * summarised, the length must match the buckets (which must decode, in
 * rising order), every bucket index must exist, the bucket counts must add
 * up to the record's count (arg0), min <= max, and the sum of durations must
 * lie between count * min and count * max (no absurd totals reach the
 * reports).
 * Return: 0, or -1 with @why set.
 */
int pi_summary_parse(const struct pi_record *rec, uint32_t slots_left, unsigned version,
                     uint64_t *words, struct pi_summary *out, const char **why);

#endif
