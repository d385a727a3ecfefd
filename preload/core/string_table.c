/* string_table.c - lock-free string interning (see string_table.h). */
#include "string_table.h"

#include "raw_syscalls.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "profinject/trace_format.h"

static uint64_t fnv1a(const char *text, size_t length)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < length; i++) {
        h ^= (unsigned char)text[i];
        h *= 1099511628211ull;
    }
    return h;
}

int pi_strings_init(struct pi_string_table *table, uint32_t max_entries, size_t arena_size)
{
    uint32_t slots = 1;
    while (slots < max_entries * 2u)
        slots <<= 1;
    size_t slot_bytes = sizeof(uint32_t) * slots;
    size_t entry_bytes = sizeof(struct pi_string_entry) * max_entries;
    size_t emitted_bytes = max_entries;
    size_t size = slot_bytes + entry_bytes + emitted_bytes + arena_size + 64;
    char *memory = pi_sys_anonymous_map(size);
    if (memory == MAP_FAILED)
        return -1;
    memset(table, 0, sizeof(*table));
    table->memory = memory;
    table->memory_size = size;
    table->entries = (struct pi_string_entry *)memory;
    table->slots = (_Atomic uint32_t *)(memory + entry_bytes);
    table->emitted = (uint8_t *)(memory + entry_bytes + slot_bytes);
    table->arena = memory + entry_bytes + slot_bytes + emitted_bytes;
    table->slot_mask = slots - 1;
    table->max_entries = max_entries;
    table->arena_size = arena_size;
    atomic_store(&table->next_id, 1); /* id 0 means "no string" */
    table->emit_from = 1;
    atomic_store(&table->promoted_from, UINT32_MAX);
    table->rescan_from = UINT32_MAX;
    return 0;
}

void pi_strings_destroy(struct pi_string_table *table)
{
    if (table->memory)
        munmap(table->memory, table->memory_size);
    memset(table, 0, sizeof(*table));
}

static int entry_matches(const struct pi_string_table *table, uint32_t id, uint16_t kind,
                         uint64_t hash, const char *text, size_t length)
{
    const struct pi_string_entry *e = &table->entries[id];
    return e->hash == hash && e->length == length && e->kind == kind &&
           memcmp(table->arena + e->offset, text, length) == 0;
}

/* Create an entry for the string, not yet findable through the hash slots. */
static uint32_t create_entry(struct pi_string_table *table, uint16_t kind, uint64_t hash,
                             const char *text, size_t length, int quiet)
{
    size_t offset = atomic_fetch_add_explicit(&table->arena_used, length, memory_order_relaxed);
    if (offset + length > table->arena_size)
        return 0;
    uint32_t id = atomic_fetch_add_explicit(&table->next_id, 1, memory_order_relaxed);
    if (id >= table->max_entries)
        return 0;
    struct pi_string_entry *e = &table->entries[id];
    memcpy(table->arena + offset, text, length);
    e->offset = offset;
    e->length = (uint32_t)length;
    e->kind = kind;
    e->hash = hash;
    atomic_store_explicit(&e->quiet, quiet != 0, memory_order_relaxed);
    atomic_store_explicit(&e->ready, 1, memory_order_release);
    return id;
}

static uint32_t intern(struct pi_string_table *table, uint16_t kind, const char *text,
                       size_t length, int quiet);

uint32_t pi_strings_intern(struct pi_string_table *table, const char *text, size_t length)
{
    return intern(table, PI_REC_STRING, text, length, 0);
}

uint32_t pi_strings_intern_quiet(struct pi_string_table *table, const char *text, size_t length)
{
    return intern(table, PI_REC_STRING, text, length, 1);
}

uint32_t pi_strings_intern_kind(struct pi_string_table *table, uint16_t kind, const char *text,
                                size_t length)
{
    return intern(table, kind, text, length, 0);
}

/* Call stacks may fill the table only so far: names and paths keep the rest. */
/* A string not kept: counted, for the trace to say (PI_LOST_STRINGS). */
static uint32_t refuse(struct pi_string_table *table)
{
    atomic_fetch_add_explicit(&table->refused, 1, memory_order_relaxed);
    return 0;
}

static int room_for_stacks(const struct pi_string_table *table)
{
    return atomic_load_explicit(&table->next_id, memory_order_relaxed) <
               table->max_entries / 4 * 3 &&
           atomic_load_explicit(&table->arena_used, memory_order_relaxed) <
               table->arena_size / 4 * 3;
}

/* Plain interning asks for a quiet entry: the writer looks at held ids again from @id on. */
static void promote(struct pi_string_table *table, uint32_t id)
{
    struct pi_string_entry *e = &table->entries[id];
    if (!atomic_load_explicit(&e->quiet, memory_order_relaxed))
        return;
    atomic_store_explicit(&e->quiet, 0, memory_order_release);
    uint32_t from = atomic_load_explicit(&table->promoted_from, memory_order_relaxed);
    while (id < from && !atomic_compare_exchange_weak_explicit(&table->promoted_from, &from, id,
                                                               memory_order_release,
                                                               memory_order_relaxed))
        ;
}

/* The id of the bytes, made when new; quiet ones are held back by the writer (see the header). */
static uint32_t intern(struct pi_string_table *table, uint16_t kind, const char *text,
                       size_t length, int quiet)
{
    if (!table->memory)
        return 0;
    if (kind == PI_REC_STACK && !room_for_stacks(table))
        return refuse(table);
    if (length > PI_MAX_STRING_LEN)
        length = PI_MAX_STRING_LEN;
    uint64_t hash = fnv1a(text, length) ^ ((uint64_t)kind * 0x9E3779B97F4A7C15ull);
    uint32_t mine = 0;
    for (uint32_t probe = 0; probe <= table->slot_mask; probe++) {
        _Atomic uint32_t *slot = &table->slots[(hash + probe) & table->slot_mask];
        uint32_t id = atomic_load_explicit(slot, memory_order_acquire);
        if (id == 0) {
            if (mine == 0 &&
                (mine = create_entry(table, kind, hash, text, length, quiet)) == 0)
                return refuse(table);
            uint32_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(slot, &expected, mine,
                                                        memory_order_release,
                                                        memory_order_acquire))
                return mine;
            id = expected; /* someone else took the slot first */
        }
        if (entry_matches(table, id, kind, hash, text, length)) {
            if (!quiet)
                promote(table, id);
            return id;
        }
    }
    return refuse(table);
}

const char *pi_strings_get(const struct pi_string_table *table, uint32_t id, uint32_t *length)
{
    if (id == 0 || id >= table->max_entries ||
        id >= atomic_load_explicit(&table->next_id, memory_order_acquire))
        return NULL;
    const struct pi_string_entry *e = &table->entries[id];
    if (!atomic_load_explicit(&e->ready, memory_order_acquire))
        return NULL;
    *length = e->length;
    return table->arena + e->offset;
}

uint16_t pi_strings_kind(const struct pi_string_table *table, uint32_t id)
{
    uint32_t length;
    return pi_strings_get(table, id, &length) ? table->entries[id].kind : 0;
}

uint32_t pi_strings_inherit(struct pi_string_table *table)
{
    if (!table->memory)
        return 1;
    uint32_t bound = atomic_load_explicit(&table->next_id, memory_order_acquire);
    if (bound > table->max_entries)
        bound = table->max_entries;
    /* emitted[] below the bound is read only for quiet ids the child writes: its pages stay
     * shared. A promotion the parent had pending is the parent's to write. */
    table->emit_from = bound > 1 ? bound : 1;
    atomic_store(&table->promoted_from, UINT32_MAX);
    table->rescan_from = UINT32_MAX;
    return table->emit_from;
}

/* A held id that plain interning has asked for since, marked written; 0 when none. Below a fork
 * child's bound, an id its parent had not written when the child asked is the child's to write. */
static uint32_t next_promoted(struct pi_string_table *table)
{
    uint32_t promoted =
        atomic_exchange_explicit(&table->promoted_from, UINT32_MAX, memory_order_acquire);
    if (promoted < table->rescan_from)
        table->rescan_from = promoted;
    for (; table->rescan_from < table->emit_from; table->rescan_from++) {
        uint32_t id = table->rescan_from;
        if (table->emitted[id] != PI_STRING_WRITTEN &&
            atomic_load_explicit(&table->entries[id].ready, memory_order_acquire) &&
            !atomic_load_explicit(&table->entries[id].quiet, memory_order_acquire)) {
            table->emitted[id] = PI_STRING_WRITTEN;
            table->rescan_from++;
            return id;
        }
    }
    table->rescan_from = UINT32_MAX;
    return 0;
}

uint32_t pi_strings_next_unemitted(struct pi_string_table *table)
{
    uint32_t again = next_promoted(table);
    if (again)
        return again;
    uint32_t end = atomic_load_explicit(&table->next_id, memory_order_acquire);
    if (end > table->max_entries)
        end = table->max_entries;
    int all_done_so_far = 1;
    for (uint32_t id = table->emit_from; id < end; id++) {
        if (table->emitted[id])
            goto skip;
        if (!atomic_load_explicit(&table->entries[id].ready, memory_order_acquire)) {
            all_done_so_far = 0; /* still being written by its thread */
            continue;
        }
        if (atomic_load_explicit(&table->entries[id].quiet, memory_order_acquire)) {
            table->emitted[id] = PI_STRING_HELD;
            goto skip;
        }
        table->emitted[id] = PI_STRING_WRITTEN;
        if (all_done_so_far)
            table->emit_from = id + 1;
        return id;
    skip:
        if (all_done_so_far)
            table->emit_from = id + 1;
    }
    return 0;
}

int pi_strings_define(struct pi_string_table *table, uint32_t id)
{
    uint32_t length;
    if (!pi_strings_get(table, id, &length) || table->emitted[id] == PI_STRING_WRITTEN)
        return 0;
    table->emitted[id] = PI_STRING_WRITTEN;
    return 1;
}
