/*
 * Unit: the bounded series (analysis/common/series.h). It grows as points
 * come, keeps every point up to PI_SERIES_MAX, then halves its resolution:
 * every other point kept, and one point in two taken from then on.
 */
#include <criterion/criterion.h>

#include "analysis/common/series.h"

Test(series, a_few_points_are_kept_as_they_came)
{
    struct pi_series s = {0};
    for (uint64_t i = 0; i < 3; i++)
        pi_series_add(&s, 100 + i, 7 * i);
    cr_assert_eq(s.count, 3);
    for (uint32_t i = 0; i < 3; i++) {
        cr_expect_eq(s.t[i], 100 + i);
        cr_expect_eq(s.v[i], 7 * i);
    }
    cr_expect_lt(s.capacity, PI_SERIES_MAX, "a short series takes room for what it has");
    pi_series_free(&s);
    cr_expect_eq(s.count, 0);
    cr_expect_null(s.t);
}

Test(series, full_it_keeps_every_other_point_and_takes_one_in_two)
{
    struct pi_series s = {0};
    for (uint64_t i = 0; i < PI_SERIES_MAX; i++)
        pi_series_add(&s, i, i * 10);
    cr_assert_eq(s.count, PI_SERIES_MAX);
    for (uint32_t i = 0; i < PI_SERIES_MAX; i++)
        cr_assert_eq(s.v[i], (uint64_t)i * 10, "point %u kept through the growth", i);
    pi_series_add(&s, PI_SERIES_MAX, PI_SERIES_MAX * 10);
    cr_assert_eq(s.count, PI_SERIES_MAX / 2 + 1);
    for (uint32_t i = 0; i < PI_SERIES_MAX / 2; i++)
        cr_assert_eq(s.t[i], 2 * (uint64_t)i);
    cr_assert_eq(s.t[PI_SERIES_MAX / 2], PI_SERIES_MAX);
    /* from now on one point in two */
    pi_series_add(&s, PI_SERIES_MAX + 1, 0);
    pi_series_add(&s, PI_SERIES_MAX + 2, 0);
    cr_assert_eq(s.count, PI_SERIES_MAX / 2 + 2);
    cr_assert_eq(s.t[s.count - 1], PI_SERIES_MAX + 2);
    pi_series_free(&s);
}
