/*
 * summary_table.h - summary mode's aggregates: per subject (record kind,
 * flags, thread and the arguments that name it) the count, total, extremes,
 * bytes and a log-linear histogram of durations in ns, in the buckets of
 * profinject/histogram_buckets.h. Owned by the writer thread alone (no
 * lock): the hooks write their records as always, the writer aggregates
 * them instead of writing them one by one.
 */
#ifndef PI_SUMMARY_TABLE_H
#define PI_SUMMARY_TABLE_H

#include <stdint.h>

#include "profinject/trace_format.h"

/* What a record is counted under: its template in the summary. */
struct pi_summary_key {
    uint16_t kind, flags;
    uint32_t tid;
    uint64_t key[3];
};

struct pi_summary_entry {
    struct pi_summary_key key;
    uint64_t count, total_ns, min_ns, max_ns, bytes;
    uint64_t first_ticks, end_ticks; /* the span of what it counts */
    uint32_t lo, hi;                 /* bucket indices [lo, hi) held in counts */
    uint32_t *counts;
    int used; /* a slot of the table with a key */
    int seen; /* pi_summary_table_add_after_first let its first record go in full */
};

/* Only the slots in use are ever walked or cleared (@in_use): the entries
 * are calloc'd, and a walk over all of them would touch every page, which
 * after a fork is a copy-on-write fault per page in parent and child. The
 * table starts small and doubles when three quarters full, up to
 * @max_capacity: keys land by hash, so a table of 8,192 entries (850 KB)
 * had a process fault in each of its pages after its first few hundred
 * subjects, in every DataLoader worker. */
struct pi_summary_table {
    struct pi_summary_entry *entries;
    uint32_t *in_use; /* indices of the @used slots with a key, in the order they got it */
    uint32_t capacity; /* a power of two */
    uint32_t max_capacity;
    uint32_t used;
};

/* pi_summary_table_init - a table of up to @max_capacity slots (a power of two); 0 or -1 */
int pi_summary_table_init(struct pi_summary_table *t, uint32_t max_capacity);

void pi_summary_table_free(struct pi_summary_table *t);

/* pi_summary_table_entry - the @index-th entry in use, for @index < t->used */
static inline struct pi_summary_entry *pi_summary_table_entry(struct pi_summary_table *t,
                                                              uint32_t index)
{
    return &t->entries[t->in_use[index]];
}

/**
 * pi_summary_table_add - count one record under @key
 * @ts, @dur_ticks: its span in clock ticks
 * @dur_ns: its duration in ns (what the histogram counts)
 * @bytes: what it moved
 * Return: 0, or -1 when the table is full or out of memory: the caller
 * writes the record in full instead, so nothing is lost.
 */
int pi_summary_table_add(struct pi_summary_table *t, const struct pi_summary_key *key, uint64_t ts,
                         uint64_t dur_ticks, uint64_t dur_ns, uint64_t bytes);

/**
 * pi_summary_table_add_after_first - pi_summary_table_add, but the first
 * record of @key since the table last forgot its keys is not counted
 * Return: 1 for that first record (the caller writes it in full, in its
 * place among the others: a file read once costs what it costs in full,
 * not a summary larger than itself), else as pi_summary_table_add.
 */
int pi_summary_table_add_after_first(struct pi_summary_table *t, const struct pi_summary_key *key,
                                     uint64_t ts, uint64_t dur_ticks, uint64_t dur_ns,
                                     uint64_t bytes);

/**
 * pi_summary_entry_emit - write @e as a PI_REC_SUMMARY record and its
 * continuation slots into @out, which has room for
 * pi_summary_entry_slots(@e) records, and empty it for the next interval
 * Return: the slots written.
 */
uint32_t pi_summary_entry_emit(struct pi_summary_entry *e, struct pi_record *out);

/* pi_summary_entry_slots - records that pi_summary_entry_emit writes for @e */
uint32_t pi_summary_entry_slots(const struct pi_summary_entry *e);

/* pi_summary_table_forget - drop every key (after an emit, when the table
 * fills with subjects that no longer come: files read once, ended threads) */
void pi_summary_table_forget(struct pi_summary_table *t);

#endif
