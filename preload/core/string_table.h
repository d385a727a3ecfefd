/*
 * string_table.h - lock-free interning of names and paths, and of the
 * other byte strings written once and referred to by id (call stacks and
 * the modules they name: the entry's record kind says which).
 *
 * Any thread may intern; ids are small integers, 0 meaning "no string".
 * An entry is fully written before its id is published in the hash table,
 * so a record that refers to an id was always made after the string was
 * complete. Two threads interning the same new string at once may both
 * create an entry; the loser uses the winner's id and its own entry is
 * written to the trace unused. No lock, no malloc: all memory is mapped at
 * start.
 */
#ifndef PI_STRING_TABLE_H
#define PI_STRING_TABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct pi_string_entry {
    _Atomic uint32_t ready;
    uint16_t kind; /* the record kind it is written as: PI_REC_STRING, _MODULE, _STACK */
    /* nonzero while only quiet interning asked for it (pi_strings_intern_quiet) */
    _Atomic uint16_t quiet;
    uint32_t length;
    uint64_t offset; /* into the arena */
    uint64_t hash;
};

struct pi_string_table {
    _Atomic uint32_t *slots; /* hash slot -> id, 0 when empty */
    uint32_t slot_mask;
    struct pi_string_entry *entries; /* indexed by id */
    uint32_t max_entries;
    _Atomic uint32_t next_id;
    char *arena;
    size_t arena_size;
    _Atomic size_t arena_used;
    uint8_t *emitted;  /* writer only: enum pi_string_emitted of each id */
    uint32_t emit_from; /* writer only: lowest id maybe not yet looked at */
    /* the lowest held id that plain interning asked for since the writer last looked; UINT32_MAX
     * for none */
    _Atomic uint32_t promoted_from;
    uint32_t rescan_from; /* writer only: held ids from here on are looked at again */
    void *memory;
    size_t memory_size;
    _Atomic uint64_t refused; /* strings and stacks not kept: the table was full */
};

/**
 * pi_strings_init - map memory for up to @max_entries strings of @arena_size bytes in all
 * Return: 0, or -1 with errno set.
 */
/* What the writer did with an id. */
enum pi_string_emitted {
    PI_STRING_NOT_YET = 0,
    PI_STRING_WRITTEN = 1,
    /* quiet, so not written: a record written in full that names it writes it
     * (pi_strings_define), or plain interning asks for it */
    PI_STRING_HELD = 2,
};

int pi_strings_init(struct pi_string_table *table, uint32_t max_entries, size_t arena_size);

void pi_strings_destroy(struct pi_string_table *table);

/**
 * pi_strings_intern - id of @length bytes at @text, adding them if new
 * Return: the id, or 0 when the table or arena is full.
 */
uint32_t pi_strings_intern(struct pi_string_table *table, const char *text, size_t length);

/**
 * pi_strings_intern_quiet - pi_strings_intern for a name that the trace may
 * never need: a path of summary mode, whose I/O is counted by directory
 * unless a window writes it in full. Its bytes are written only once a
 * record written in full names it, or once plain interning asks for it.
 */
uint32_t pi_strings_intern_quiet(struct pi_string_table *table, const char *text, size_t length);

/**
 * pi_strings_intern_kind - pi_strings_intern for bytes written as record
 * @kind (a module or a stack); equal bytes of another kind get another id.
 * New stacks are refused (0) once three quarters of the entries or of the
 * arena are used, so that names and paths always find room.
 */
uint32_t pi_strings_intern_kind(struct pi_string_table *table, uint16_t kind, const char *bytes,
                                size_t length);

/* pi_strings_kind - the record kind of a ready entry, 0 for an unknown id */
uint16_t pi_strings_kind(const struct pi_string_table *table, uint32_t id);

/**
 * pi_strings_get - the bytes of a ready entry
 * @length: receives the length
 * Return: pointer into the arena, or NULL for an unknown or unfinished id.
 */
const char *pi_strings_get(const struct pi_string_table *table, uint32_t id, uint32_t *length);

/**
 * pi_strings_inherit - in a fork child: the ids made so far are the
 * parent's, which its writer writes to its own file (those being made at
 * the fork included: the parent's threads finish them), so the child's
 * file writes only the ids made from now on
 * Return: the lowest id the child's file defines; the ones below are the parent's.
 */
uint32_t pi_strings_inherit(struct pi_string_table *table);

/**
 * pi_strings_next_unemitted - writer only: next ready string to write now
 * (quiet ones are held back)
 * Return: its id (marked written), or 0 when there is none.
 */
uint32_t pi_strings_next_unemitted(struct pi_string_table *table);

/**
 * pi_strings_define - writer only: whether the caller must write @id's
 * bytes now, ahead of a record that names it (a quiet string not yet
 * written; in a fork child, an inherited one its parent had not written)
 * Return: 1 (and @id is marked written), else 0.
 */
int pi_strings_define(struct pi_string_table *table, uint32_t id);

#endif
