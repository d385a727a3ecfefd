/* Unit: string interning, alone and from many threads at once. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/string_table.h"
#include "profinject/trace_format.h"

static struct pi_string_table table;

static void setup(void)
{
    cr_assert_eq(pi_strings_init(&table, 4096, 1 << 20), 0);
}

static void teardown(void)
{
    pi_strings_destroy(&table);
}

TestSuite(string_table, .init = setup, .fini = teardown);

Test(string_table, same_text_same_id)
{
    uint32_t a = pi_strings_intern(&table, "/data/train.bin", 15);
    uint32_t b = pi_strings_intern(&table, "/data/valid.bin", 15);
    cr_assert_neq(a, 0);
    cr_assert_neq(b, 0);
    cr_assert_neq(a, b);
    cr_assert_eq(pi_strings_intern(&table, "/data/train.bin", 15), a);
    uint32_t length;
    const char *text = pi_strings_get(&table, a, &length);
    cr_assert_eq(length, 15);
    cr_assert(memcmp(text, "/data/train.bin", 15) == 0);
    cr_assert_null(pi_strings_get(&table, 0, &length));
    cr_assert_null(pi_strings_get(&table, 999, &length));
}

Test(string_table, prefix_is_a_different_string)
{
    uint32_t a = pi_strings_intern(&table, "abc", 3);
    uint32_t b = pi_strings_intern(&table, "abc", 2);
    cr_assert_neq(a, b);
    cr_assert_neq(pi_strings_intern(&table, "", 0), 0, "the empty string is a string");
}

Test(string_table, kinds_keep_equal_bytes_apart)
{
    uint32_t text = pi_strings_intern(&table, "frames", 6);
    uint32_t stack = pi_strings_intern_kind(&table, PI_REC_STACK, "frames", 6);
    uint32_t module = pi_strings_intern_kind(&table, PI_REC_MODULE, "frames", 6);
    cr_assert(text && stack && module);
    cr_assert(text != stack && stack != module && text != module);
    cr_assert_eq(pi_strings_intern_kind(&table, PI_REC_STACK, "frames", 6), stack);
    cr_assert_eq(pi_strings_kind(&table, text), PI_REC_STRING);
    cr_assert_eq(pi_strings_kind(&table, stack), PI_REC_STACK);
    cr_assert_eq(pi_strings_kind(&table, module), PI_REC_MODULE);
    cr_assert_eq(pi_strings_kind(&table, 999), 0);
}

Test(string_table, stacks_leave_a_quarter_to_names)
{
    char text[32];
    uint32_t stacks = 0;
    for (int i = 0; i < 4096; i++) {
        int n = snprintf(text, sizeof(text), "stack %d", i);
        stacks += pi_strings_intern_kind(&table, PI_REC_STACK, text, (size_t)n) != 0;
    }
    cr_assert_lt(stacks, 4096 / 4 * 3, "stacks stop at three quarters");
    cr_assert_gt(stacks, 4096 / 4 * 3 - 8);
    uint32_t names = 0;
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(text, sizeof(text), "name %d", i);
        names += pi_strings_intern(&table, text, (size_t)n) != 0;
    }
    cr_assert_eq(names, 1000, "names and paths still find room");
}

Test(string_table, full_table_returns_zero)
{
    char text[32];
    uint32_t last = 1;
    int i;
    for (i = 0; i < 5000 && last != 0; i++) {
        int n = snprintf(text, sizeof(text), "name-%d", i);
        last = pi_strings_intern(&table, text, (size_t)n);
    }
    cr_assert_eq(last, 0, "a full table says so");
    cr_assert_eq(i, 4096, "ids 1..4095 were handed out before it was full (got %d)", i);
}

Test(string_table, emitted_once_each_and_after_fork_only_the_new)
{
    uint32_t a = pi_strings_intern(&table, "one", 3);
    cr_assert_eq(pi_strings_next_unemitted(&table), a);
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
    uint32_t b = pi_strings_intern(&table, "two", 3);
    /* a fork child whose parent had not written "two" yet: the parent will, not the child */
    uint32_t bound = pi_strings_inherit(&table);
    cr_assert_eq(bound, b + 1, "ids below %u are the parent's (bound %u)", b + 1, bound);
    cr_assert_eq(pi_strings_next_unemitted(&table), 0, "the parent's strings are not written again");
    uint32_t c = pi_strings_intern(&table, "three", 5);
    cr_assert_eq(pi_strings_intern(&table, "one", 3), a, "an inherited string keeps its id");
    cr_assert_eq(pi_strings_next_unemitted(&table), c);
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
}

/* Quiet strings (summary mode's paths) are written only when asked for: by a record that names
 * them (define), or by plain interning of the same bytes; never twice. */
Test(string_table, quiet_strings_wait_until_named)
{
    uint32_t path = pi_strings_intern_quiet(&table, "/data/a.bin", 11);
    uint32_t name = pi_strings_intern(&table, "train", 5);
    cr_assert_eq(pi_strings_next_unemitted(&table), name, "the quiet path is held back");
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
    cr_assert_eq(pi_strings_intern_quiet(&table, "/data/a.bin", 11), path, "same bytes, same id");
    cr_assert_eq(pi_strings_define(&table, path), 1, "a record written in full names it");
    cr_assert_eq(pi_strings_define(&table, path), 0, "written once");
    cr_assert_eq(pi_strings_define(&table, name), 0, "a plain string was written already");

    uint32_t other = pi_strings_intern_quiet(&table, "/data/b.bin", 11);
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
    cr_assert_eq(pi_strings_intern(&table, "/data/b.bin", 11), other, "plain interning finds it");
    cr_assert_eq(pi_strings_next_unemitted(&table), other, "and asks for it");
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
    cr_assert_eq(pi_strings_define(&table, other), 0);
}

/* A fork child names a path its parent held back: the child writes it (its parent never will);
 * one its parent wrote, it does not. */
Test(string_table, fork_child_writes_what_its_parent_held)
{
    uint32_t held = pi_strings_intern_quiet(&table, "/data/held.bin", 14);
    uint32_t written = pi_strings_intern_quiet(&table, "/data/written.bin", 17);
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
    cr_assert_eq(pi_strings_define(&table, written), 1);
    pi_strings_inherit(&table);
    cr_assert_eq(pi_strings_define(&table, written), 0, "in the parent's file");
    cr_assert_eq(pi_strings_define(&table, held), 1, "the child's to write");
    uint32_t promoted = pi_strings_intern_quiet(&table, "/data/later.bin", 15);
    (void)promoted;
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
}

/* Promoted below a fork child's bound: the parent had held it; the child writes it. */
Test(string_table, fork_child_writes_an_inherited_quiet_string_it_interns)
{
    uint32_t held = pi_strings_intern_quiet(&table, "/lib/x.py", 9);
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
    pi_strings_inherit(&table);
    cr_assert_eq(pi_strings_intern(&table, "/lib/x.py", 9), held);
    cr_assert_eq(pi_strings_next_unemitted(&table), held);
    cr_assert_eq(pi_strings_next_unemitted(&table), 0);
}

#define THREADS 8
#define NAMES 500
static uint32_t ids[THREADS][NAMES];

static void *intern_all(void *arg)
{
    long t = (long)arg;
    char text[32];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NAMES; i++) {
            int k = (int)((i + t * 37) % NAMES); /* every thread, its own order */
            int n = snprintf(text, sizeof(text), "kernel_%d", k);
            uint32_t id = pi_strings_intern(&table, text, (size_t)n);
            if (round == 0)
                ids[t][k] = id;
            else if (ids[t][k] != id)
                ids[t][k] = 0; /* unstable id: the assertion below fails */
        }
    return NULL;
}

Test(string_table, threads_agree_on_ids)
{
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, intern_all, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    for (int k = 0; k < NAMES; k++) {
        cr_assert_neq(ids[0][k], 0);
        for (int t = 1; t < THREADS; t++)
            cr_assert_eq(ids[t][k], ids[0][k], "thread %d sees another id for name %d", t, k);
        uint32_t length;
        char expected[32];
        int n = snprintf(expected, sizeof(expected), "kernel_%d", k);
        const char *text = pi_strings_get(&table, ids[0][k], &length);
        cr_assert(length == (uint32_t)n && memcmp(text, expected, length) == 0);
    }
}
