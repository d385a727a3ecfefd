/*
 * latency_table.h - named latency statistics: one histogram (durations)
 * plus byte counts per key, e.g. "io/read/file" or a file's path. Keys are
 * few (call kinds, files, kernel names), events are many: lookups are a
 * hash probe, memory grows with keys only.
 */
#ifndef PI_LATENCY_TABLE_H
#define PI_LATENCY_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/common/histogram.h"

struct pi_latency_entry {
    char *group;  /* "io", "wait", "file", ... */
    char *name;   /* call, wait kind, path */
    char *detail; /* fd class, or "" */
    struct pi_histogram durations;
    uint64_t bytes;
    uint64_t opens; /* for files */
    uint64_t hash;
};

struct pi_latency_table {
    struct pi_latency_entry **slots;
    size_t capacity, count;
    int exact;
};

void pi_latency_table_init(struct pi_latency_table *table, int exact);
void pi_latency_table_free(struct pi_latency_table *table);

/**
 * pi_latency_get - the entry for (@group, @name, @detail), created when new
 * Return: the entry, or NULL when out of memory.
 */
struct pi_latency_entry *pi_latency_get(struct pi_latency_table *table, const char *group,
                                        const char *name, const char *detail);

/**
 * pi_latency_table_merge - add @from's entries into @into: durations merged,
 * bytes and opens added, entries that are new to @into created
 * Return: 0, or -1 when out of memory.
 */
int pi_latency_table_merge(struct pi_latency_table *into, const struct pi_latency_table *from);

/**
 * pi_latency_sorted - the entries of @group (NULL: all), largest total time first
 * @count: receives how many
 * Return: a malloc'd array the caller frees (entries stay owned by the table).
 */
struct pi_latency_entry **pi_latency_sorted(const struct pi_latency_table *table,
                                            const char *group, size_t *count);

#endif
