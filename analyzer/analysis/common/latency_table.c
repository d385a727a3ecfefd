/* latency_table.c - keyed latency statistics (see latency_table.h). */
#include "latency_table.h"

#include <stdlib.h>
#include <string.h>

#include "u64_map.h"

static uint64_t hash_key(const char *group, const char *name, const char *detail)
{
    return pi_text_hash_part(pi_text_hash_part(pi_text_hash_part(PI_TEXT_HASH_START, group),
                                               name),
                             detail);
}

void pi_latency_table_init(struct pi_latency_table *table, int exact)
{
    memset(table, 0, sizeof(*table));
    table->exact = exact;
}

static void free_entry(struct pi_latency_entry *e)
{
    pi_histogram_free(&e->durations);
    free(e->group);
    free(e->name);
    free(e->detail);
    free(e);
}

void pi_latency_table_free(struct pi_latency_table *table)
{
    for (size_t i = 0; i < table->capacity; i++)
        if (table->slots[i])
            free_entry(table->slots[i]);
    free(table->slots);
    memset(table, 0, sizeof(*table));
}

static int grow(struct pi_latency_table *table)
{
    size_t capacity = table->capacity ? table->capacity * 2 : 64;
    struct pi_latency_entry **slots = calloc(capacity, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < table->capacity; i++) {
        struct pi_latency_entry *e = table->slots[i];
        if (!e)
            continue;
        size_t at = e->hash & (capacity - 1);
        while (slots[at])
            at = (at + 1) & (capacity - 1);
        slots[at] = e;
    }
    free(table->slots);
    table->slots = slots;
    table->capacity = capacity;
    return 0;
}

struct pi_latency_entry *pi_latency_get(struct pi_latency_table *table, const char *group,
                                        const char *name, const char *detail)
{
    if ((table->count + 1) * 2 > table->capacity && grow(table) != 0)
        return NULL;
    uint64_t hash = hash_key(group, name, detail);
    size_t at = hash & (table->capacity - 1);
    for (struct pi_latency_entry *e; (e = table->slots[at]) != NULL;
         at = (at + 1) & (table->capacity - 1))
        if (e->hash == hash && strcmp(e->name, name) == 0 && strcmp(e->group, group) == 0 &&
            strcmp(e->detail, detail) == 0)
            return e;
    struct pi_latency_entry *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->group = strdup(group);
    e->name = strdup(name);
    e->detail = strdup(detail);
    e->hash = hash;
    pi_histogram_init(&e->durations, table->exact);
    if (!e->group || !e->name || !e->detail) {
        free_entry(e);
        return NULL;
    }
    table->slots[at] = e;
    table->count++;
    return e;
}

int pi_latency_table_merge(struct pi_latency_table *into, const struct pi_latency_table *from)
{
    for (size_t i = 0; i < from->capacity; i++) {
        const struct pi_latency_entry *e = from->slots[i];
        if (!e)
            continue;
        struct pi_latency_entry *to = pi_latency_get(into, e->group, e->name, e->detail);
        if (!to || pi_histogram_merge(&to->durations, &e->durations) != 0)
            return -1;
        to->bytes += e->bytes;
        to->opens += e->opens;
    }
    return 0;
}

static int by_total_time(const void *a, const void *b)
{
    const struct pi_latency_entry *x = *(struct pi_latency_entry *const *)a;
    const struct pi_latency_entry *y = *(struct pi_latency_entry *const *)b;
    if (x->durations.sum != y->durations.sum)
        return x->durations.sum > y->durations.sum ? -1 : 1;
    int c = strcmp(x->group, y->group);
    if (c == 0)
        c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->detail, y->detail);
}

struct pi_latency_entry **pi_latency_sorted(const struct pi_latency_table *table,
                                            const char *group, size_t *count)
{
    struct pi_latency_entry **list = malloc(sizeof(*list) * (table->count + 1));
    size_t n = 0;
    for (size_t i = 0; list && i < table->capacity; i++) {
        struct pi_latency_entry *e = table->slots[i];
        if (e && (!group || strcmp(e->group, group) == 0))
            list[n++] = e;
    }
    if (list)
        qsort(list, n, sizeof(*list), by_total_time);
    *count = n;
    return list;
}
