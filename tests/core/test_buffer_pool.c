/* Unit: buffer hand-off between owners and the writer. */
#include <criterion/criterion.h>

#include "core/buffer_pool.h"

Test(buffer_pool, acquire_until_empty_then_reuse)
{
    struct pi_buffer_pool pool;
    cr_assert_eq(pi_pool_init(&pool, 3, 3, 16), 0);
    struct pi_buffer *a = pi_pool_acquire(&pool), *b = pi_pool_acquire(&pool),
                     *c = pi_pool_acquire(&pool);
    cr_assert(a && b && c && a != b && b != c && a != c);
    cr_assert_null(pi_pool_acquire(&pool), "no buffer left: the caller drops, never waits");
    cr_assert_lt(a->sequence, b->sequence);
    cr_assert_lt(b->sequence, c->sequence);

    a->records[0].kind = PI_REC_MARK;
    atomic_store(&a->committed, 1);
    pi_pool_retire(&pool, a);
    cr_assert_null(pi_pool_acquire(&pool), "retired is not free until the writer has copied it");
    cr_assert_eq(atomic_load(&a->state), PI_BUF_RETIRED);
    pi_pool_release(&pool, a);
    struct pi_buffer *again = pi_pool_acquire(&pool);
    cr_assert_eq(again, a);
    cr_assert_eq(atomic_load(&again->committed), 0);
    cr_assert_eq(again->flushed, 0);
    cr_assert_gt(again->sequence, c->sequence);
    pi_pool_destroy(&pool);
}

Test(buffer_pool, reset_frees_everything)
{
    struct pi_buffer_pool pool;
    cr_assert_eq(pi_pool_init(&pool, 4, 4, 8), 0);
    for (int i = 0; i < 4; i++)
        cr_assert_not_null(pi_pool_acquire(&pool));
    pi_pool_reset(&pool);
    for (int i = 0; i < 4; i++)
        cr_assert_not_null(pi_pool_acquire(&pool));
    pi_pool_destroy(&pool);
}

Test(buffer_pool, rejects_useless_sizes)
{
    struct pi_buffer_pool pool;
    cr_assert_eq(pi_pool_init(&pool, 0, 0, 16), -1);
    cr_assert_eq(pi_pool_init(&pool, 4, 4, 1), -1);
}

/* The pool grows a chunk at a time while the live threads (each holding a
 * buffer or looking for one) are three quarters of it, never past its
 * bound; buffers already handed out stay where they are. */
Test(buffer_pool, grows_with_the_threads_that_hold_it_up_to_its_bound)
{
    struct pi_buffer_pool pool;
    cr_assert_eq(pi_pool_init(&pool, 4, 12, 8), 0);
    struct pi_buffer *held[12];
    for (int i = 0; i < 2; i++)
        held[i] = pi_pool_acquire(&pool);
    cr_assert_eq(pi_pool_grow(&pool, 2), 0, "two threads for four buffers: no need");
    held[2] = pi_pool_acquire(&pool);
    cr_assert_eq(pi_pool_grow(&pool, 3), 1, "three threads for four: one chunk more");
    cr_assert_eq(pi_pool_count(&pool), 8);
    for (int i = 3; i < 8; i++)
        cr_assert_not_null(held[i] = pi_pool_acquire(&pool), "buffer %d of 8", i);
    cr_assert_null(pi_pool_acquire(&pool));
    cr_assert_eq(pi_pool_grow(&pool, 8), 1);
    for (int i = 8; i < 12; i++)
        cr_assert_not_null(held[i] = pi_pool_acquire(&pool), "buffer %d of 12", i);
    cr_assert_eq(pi_pool_grow(&pool, 12), 0, "at its bound");
    cr_assert_null(pi_pool_acquire(&pool), "the caller drops, never waits");
    for (int i = 0; i < 12; i++) {
        held[i]->records[7].kind = PI_REC_MARK; /* every buffer's memory is there */
        for (int j = 0; j < i; j++)
            cr_assert_neq(held[i], held[j]);
    }
    cr_assert_eq(pi_pool_buffer(&pool, 0), held[0], "first fit, and the first chunk stays");
    pi_pool_reset(&pool);
    cr_assert_eq(atomic_load(&pool.free_count), 12, "a fork child has every buffer free");
    pi_pool_destroy(&pool);
}

/* Buffers waiting for the writer are no reason to grow: the writer frees
 * them, and more memory would only let a backlog grow. */
Test(buffer_pool, does_not_grow_for_a_writer_behind)
{
    struct pi_buffer_pool pool;
    cr_assert_eq(pi_pool_init(&pool, 4, 64, 8), 0);
    for (int i = 0; i < 4; i++)
        pi_pool_retire(&pool, pi_pool_acquire(&pool));
    cr_assert_eq(pi_pool_grow(&pool, 0), 0);
    cr_assert_eq(pi_pool_count(&pool), 4);
    pi_pool_destroy(&pool);
}

/* The writer copies buffers in the order they were taken, whatever their place. */
Test(buffer_pool, sorts_buffers_by_acquisition)
{
    struct pi_buffer_pool pool;
    cr_assert_eq(pi_pool_init(&pool, 64, 64, 2), 0);
    uint32_t order[64];
    uint64_t keys[64];
    for (uint32_t i = 0; i < 64; i++) {
        order[i] = (i * 37) % 64; /* a permutation */
        pi_pool_buffer(&pool, i)->sequence = 1000 - 7 * (uint64_t)i; /* taken last to first */
    }
    pi_pool_sort_by_sequence(&pool, order, keys, 64);
    for (uint32_t i = 0; i < 64; i++)
        cr_assert_eq(order[i], 63 - i);
    pi_pool_destroy(&pool);
}
