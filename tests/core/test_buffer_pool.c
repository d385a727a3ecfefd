/* Unit: buffer hand-off between owners and the writer. */
#include <criterion/criterion.h>

#include "core/buffer_pool.h"

Test(buffer_pool, acquire_until_empty_then_reuse)
{
    struct pi_buffer_pool pool;
    cr_assert_eq(pi_pool_init(&pool, 3, 16), 0);
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
    cr_assert_eq(pi_pool_init(&pool, 4, 8), 0);
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
    cr_assert_eq(pi_pool_init(&pool, 0, 16), -1);
    cr_assert_eq(pi_pool_init(&pool, 4, 1), -1);
}
