/* summary_table.c - summary mode's aggregates (see summary_table.h). */
#include "summary_table.h"

#include <stdlib.h>
#include <string.h>

#include "profinject/histogram_buckets.h"
#include "profinject/summary_buckets.h"

#define FIRST_CAPACITY 256u

int pi_summary_table_init(struct pi_summary_table *t, uint32_t max_capacity)
{
    uint32_t capacity = max_capacity < FIRST_CAPACITY ? max_capacity : FIRST_CAPACITY;
    t->entries = calloc(capacity, sizeof(*t->entries));
    t->in_use = malloc(capacity * sizeof(*t->in_use));
    t->used = 0;
    if (!t->entries || !t->in_use) {
        pi_summary_table_free(t);
        return -1;
    }
    t->capacity = capacity;
    t->max_capacity = max_capacity;
    return 0;
}

void pi_summary_table_forget(struct pi_summary_table *t)
{
    for (uint32_t i = 0; i < t->used; i++) {
        struct pi_summary_entry *e = pi_summary_table_entry(t, i);
        free(e->counts);
        memset(e, 0, sizeof(*e));
    }
    t->used = 0;
}

void pi_summary_table_free(struct pi_summary_table *t)
{
    /* the entries themselves are not cleared: in a fork child they are the
     * parent's pages, copied on the first write */
    for (uint32_t i = 0; t->entries && t->in_use && i < t->used; i++)
        free(pi_summary_table_entry(t, i)->counts);
    free(t->entries);
    free(t->in_use);
    t->entries = NULL;
    t->in_use = NULL;
    t->capacity = 0;
    t->used = 0;
}

static uint64_t hash_key(const struct pi_summary_key *k)
{
    uint64_t h = ((uint64_t)k->kind << 48) ^ ((uint64_t)k->flags << 32) ^ k->tid;
    for (int i = 0; i < 3; i++) {
        h ^= k->key[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 29);
}

static int same_key(const struct pi_summary_key *a, const struct pi_summary_key *b)
{
    return a->kind == b->kind && a->flags == b->flags && a->tid == b->tid &&
           a->key[0] == b->key[0] && a->key[1] == b->key[1] && a->key[2] == b->key[2];
}

/* Double the table; 0 or -1 (it stays as it was). */
static int grow(struct pi_summary_table *t)
{
    uint32_t capacity = t->capacity * 2, mask = capacity - 1;
    struct pi_summary_entry *entries = calloc(capacity, sizeof(*entries));
    uint32_t *in_use = malloc(capacity * sizeof(*in_use));
    if (!entries || !in_use) {
        free(entries);
        free(in_use);
        return -1;
    }
    for (uint32_t k = 0; k < t->used; k++) {
        const struct pi_summary_entry *e = pi_summary_table_entry(t, k);
        uint32_t i = (uint32_t)hash_key(&e->key) & mask;
        while (entries[i].used)
            i = (i + 1) & mask;
        entries[i] = *e;
        in_use[k] = i;
    }
    free(t->entries);
    free(t->in_use);
    t->entries = entries;
    t->in_use = in_use;
    t->capacity = capacity;
    return 0;
}

/* The entry of @key, made when new; NULL when the table is (three quarters) full. */
static struct pi_summary_entry *find(struct pi_summary_table *t, const struct pi_summary_key *key)
{
    if (t->used * 4 >= t->capacity * 3 && t->capacity < t->max_capacity)
        grow(t);
    uint32_t mask = t->capacity - 1;
    for (uint32_t i = (uint32_t)hash_key(key) & mask, probes = 0; probes < t->capacity;
         i = (i + 1) & mask, probes++) {
        struct pi_summary_entry *e = &t->entries[i];
        if (e->used && same_key(&e->key, key))
            return e;
        if (!e->used) {
            if (t->used * 4 >= t->capacity * 3)
                return NULL; /* keep probes short */
            e->used = 1;
            e->key = *key;
            e->min_ns = UINT64_MAX;
            t->in_use[t->used++] = i;
            return e;
        }
    }
    return NULL;
}

/* Make bucket @index addressable in @e, with slack so that neighbours do not grow it one by one. */
static int cover(struct pi_summary_entry *e, uint32_t index)
{
    uint32_t lo = e->counts ? (index < e->lo ? (index > 8 ? index - 8 : 0) : e->lo) : index;
    uint32_t hi = e->counts ? (index >= e->hi ? index + 9 : e->hi) : index + 1;
    if (hi > PI_BUCKET_COUNT)
        hi = PI_BUCKET_COUNT;
    uint32_t *counts = calloc(hi - lo, sizeof(*counts));
    if (!counts)
        return -1;
    if (e->counts) {
        memcpy(counts + (e->lo - lo), e->counts, sizeof(*counts) * (e->hi - e->lo));
        free(e->counts);
    }
    e->counts = counts;
    e->lo = lo;
    e->hi = hi;
    return 0;
}

static int add_to(struct pi_summary_entry *e, uint64_t ts, uint64_t dur_ticks, uint64_t dur_ns,
                  uint64_t bytes)
{
    uint32_t index = pi_bucket_of(dur_ns);
    if ((!e->counts || index < e->lo || index >= e->hi) && cover(e, index) != 0)
        return -1;
    /* an interval's count of one bucket stays far below 2^32 (records a second x 10 s) */
    e->counts[index - e->lo]++;
    if (e->count == 0 || ts < e->first_ticks)
        e->first_ticks = ts;
    if (ts + dur_ticks > e->end_ticks)
        e->end_ticks = ts + dur_ticks;
    e->count++;
    e->total_ns += dur_ns;
    e->bytes += bytes;
    if (dur_ns < e->min_ns)
        e->min_ns = dur_ns;
    if (dur_ns > e->max_ns)
        e->max_ns = dur_ns;
    return 0;
}

int pi_summary_table_add(struct pi_summary_table *t, const struct pi_summary_key *key, uint64_t ts,
                         uint64_t dur_ticks, uint64_t dur_ns, uint64_t bytes)
{
    struct pi_summary_entry *e = find(t, key);
    return e ? add_to(e, ts, dur_ticks, dur_ns, bytes) : -1;
}

int pi_summary_table_add_after_first(struct pi_summary_table *t, const struct pi_summary_key *key,
                                     uint64_t ts, uint64_t dur_ticks, uint64_t dur_ns,
                                     uint64_t bytes)
{
    struct pi_summary_entry *e = find(t, key);
    if (!e)
        return -1;
    if (!e->seen) {
        e->seen = 1;
        return 1;
    }
    return add_to(e, ts, dur_ticks, dur_ns, bytes);
}

/* The bytes @e's buckets take (summary_buckets.h): each used one's step from the previous and
 * its count; @used receives how many are used */
static uint64_t bucket_bytes(const struct pi_summary_entry *e, uint32_t *used)
{
    uint64_t n = 0;
    *used = 0;
    for (uint32_t i = 0, previous = 0; e->counts && i < e->hi - e->lo; i++)
        if (e->counts[i]) {
            n += pi_leb128_size(e->lo + i - previous) + pi_leb128_size(e->counts[i]);
            previous = e->lo + i;
            ++*used;
        }
    return n;
}

uint32_t pi_summary_entry_slots(const struct pi_summary_entry *e)
{
    uint32_t used;
    return 1 + pi_string_slots(sizeof(struct pi_summary_body) + bucket_bytes(e, &used));
}

uint32_t pi_summary_entry_emit(struct pi_summary_entry *e, struct pi_record *out)
{
    uint32_t buckets;
    uint64_t length = sizeof(struct pi_summary_body) + bucket_bytes(e, &buckets);
    uint32_t slots = 1 + pi_string_slots(length);
    memset(out, 0, sizeof(*out) * slots);
    out->kind = PI_REC_SUMMARY;
    out->tid = e->key.tid;
    out->ts = e->first_ticks;
    out->dur = e->end_ticks - e->first_ticks;
    out->arg[0] = e->count;
    out->arg[1] = length;
    struct pi_summary_body body = {e->key.kind, e->key.flags, buckets,
                                   {e->key.key[0], e->key.key[1], e->key.key[2]},
                                   e->total_ns, e->min_ns, e->max_ns, e->bytes};
    memcpy(out + 1, &body, sizeof(body));
    uint8_t *bytes = (uint8_t *)(out + 1) + sizeof(body);
    for (uint32_t i = 0, previous = 0; i < e->hi - e->lo; i++)
        if (e->counts[i]) {
            bytes = pi_leb128_put(bytes, e->lo + i - previous);
            bytes = pi_leb128_put(bytes, e->counts[i]);
            previous = e->lo + i;
            e->counts[i] = 0;
        }
    e->count = e->total_ns = e->bytes = e->max_ns = 0;
    e->min_ns = UINT64_MAX;
    e->first_ticks = e->end_ticks = 0;
    return slots;
}
