/*
 * u64_map.h - a hash map from non-zero 64-bit keys to three 64-bit values,
 * for live allocations (pointer -> size, kind, call site), live bytes per
 * call site and pending correlation ids. Linear probing with backward-shift
 * deletion: no tombstones, so it stays fast however many keys come and go.
 */
#ifndef PI_U64_MAP_H
#define PI_U64_MAP_H

#include <stddef.h>
#include <stdint.h>

struct pi_u64_entry {
    uint64_t key; /* 0: empty */
    uint64_t value[3];
};

struct pi_u64_map {
    struct pi_u64_entry *slots;
    size_t capacity, count;
};

struct pi_u64_map *pi_u64_map_new(void);
void pi_u64_map_free(struct pi_u64_map *map);

/* pi_u64_map_get - the entry of @key, or NULL */
struct pi_u64_entry *pi_u64_map_get(struct pi_u64_map *map, uint64_t key);

/* pi_u64_map_put - the entry of @key, created with zero values if new; NULL when out of memory */
struct pi_u64_entry *pi_u64_map_put(struct pi_u64_map *map, uint64_t key);

/* pi_u64_map_remove - delete @key if present */
void pi_u64_map_remove(struct pi_u64_map *map, uint64_t key);

/* Keys made of text (FNV-1a): start from PI_TEXT_HASH_START and fold each part in with
 * pi_text_hash_part, which ends it with a separator, so that ("ab", "c") and ("a", "bc")
 * differ. A key may still be 0 or collide: callers probe on. */
#define PI_TEXT_HASH_START 1469598103934665603ull

static inline uint64_t pi_text_hash_part(uint64_t hash, const char *text)
{
    for (; *text; text++)
        hash = (hash ^ (unsigned char)*text) * 1099511628211ull;
    return (hash ^ 0xff) * 1099511628211ull;
}

#endif
