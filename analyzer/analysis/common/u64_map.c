/* u64_map.c - see u64_map.h. */
#include "u64_map.h"

#include <stdlib.h>

static size_t slot_of(const struct pi_u64_map *map, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (map->capacity - 1);
}

struct pi_u64_map *pi_u64_map_new(void)
{
    struct pi_u64_map *map = calloc(1, sizeof(*map));
    if (!map)
        return NULL;
    map->capacity = 64;
    map->slots = calloc(map->capacity, sizeof(*map->slots));
    if (!map->slots) {
        free(map);
        return NULL;
    }
    return map;
}

void pi_u64_map_free(struct pi_u64_map *map)
{
    if (map)
        free(map->slots);
    free(map);
}

struct pi_u64_entry *pi_u64_map_get(struct pi_u64_map *map, uint64_t key)
{
    for (size_t at = slot_of(map, key);; at = (at + 1) & (map->capacity - 1)) {
        if (map->slots[at].key == key)
            return &map->slots[at];
        if (map->slots[at].key == 0)
            return NULL;
    }
}

static int grow(struct pi_u64_map *map)
{
    struct pi_u64_map bigger = {calloc(map->capacity * 2, sizeof(struct pi_u64_entry)),
                                map->capacity * 2, 0};
    if (!bigger.slots)
        return -1;
    for (size_t i = 0; i < map->capacity; i++)
        if (map->slots[i].key) {
            size_t at = slot_of(&bigger, map->slots[i].key);
            while (bigger.slots[at].key)
                at = (at + 1) & (bigger.capacity - 1);
            bigger.slots[at] = map->slots[i];
        }
    free(map->slots);
    map->slots = bigger.slots;
    map->capacity = bigger.capacity;
    return 0;
}

struct pi_u64_entry *pi_u64_map_put(struct pi_u64_map *map, uint64_t key)
{
    struct pi_u64_entry *e = pi_u64_map_get(map, key);
    if (e)
        return e;
    if ((map->count + 1) * 4 > map->capacity * 3 && grow(map) != 0)
        return NULL;
    size_t at = slot_of(map, key);
    while (map->slots[at].key)
        at = (at + 1) & (map->capacity - 1);
    map->slots[at] = (struct pi_u64_entry){key, {0, 0, 0}};
    map->count++;
    return &map->slots[at];
}

void pi_u64_map_remove(struct pi_u64_map *map, uint64_t key)
{
    size_t mask = map->capacity - 1, at = slot_of(map, key);
    while (map->slots[at].key != key) {
        if (map->slots[at].key == 0)
            return;
        at = (at + 1) & mask;
    }
    /* backward-shift: move later entries of the same run into the hole */
    size_t hole = at;
    for (size_t next = (hole + 1) & mask; map->slots[next].key; next = (next + 1) & mask) {
        size_t home = slot_of(map, map->slots[next].key);
        int movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next);
        if (movable) {
            map->slots[hole] = map->slots[next];
            hole = next;
        }
    }
    map->slots[hole].key = 0;
    map->count--;
}
