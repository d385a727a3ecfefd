/*
 * Unit: GPU work and lock waits wait for their step in a list that stays
 * short. A step source that never finishes a step (a job without NVTX
 * ranges, or without a DataLoader) keeps a bounded list however long the
 * trace; a step finished after many parts still gets every one of them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/host/steps.h"
#include "analysis/model/model.h"

#define MS 1000000ull

Test(step_parts, a_source_without_steps_keeps_a_bounded_list)
{
    struct pi_steps steps;
    memset(&steps, 0, sizeof(steps));
    size_t most = 0;
    for (uint64_t i = 0; i < 1000000; i++) {
        pi_steps_lock(&steps, 1000 * i, 200);
        pi_steps_gpu(&steps, 1000 * i + 500, 300);
        if (steps.pending_count > most)
            most = steps.pending_count;
    }
    cr_assert_leq(most, 65536, "two million parts, %zu held at once", most);
    pi_steps_free(&steps);
}

Test(step_parts, a_long_step_gets_all_its_parts)
{
    struct pi_steps steps;
    memset(&steps, 0, sizeof(steps));
    /* a first step of 10 ms, then one of 200 ms with 100,000 lock waits and
     * as many kernels before it is finished */
    pi_steps_record(&steps, 0, 10 * MS, 0, 0);
    uint64_t lock = 0, gpu = 0, longest = 0, release = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        uint64_t ts = 10 * MS + 2000 * i, wait = 100 + i % 900;
        pi_steps_lock(&steps, ts, wait);
        pi_steps_gpu(&steps, ts + 1000, 700);
        lock += wait;
        gpu += 700;
        if (wait >= longest) {
            longest = wait;
            release = ts + wait;
        }
    }
    pi_steps_record(&steps, 10 * MS, 210 * MS, 0, 0);
    struct pi_step_figures f;
    cr_assert(pi_steps_figures(&steps, 1, &f));
    cr_assert_eq(f.lock, lock, "lock waits %llu of %llu ns", (unsigned long long)f.lock,
                 (unsigned long long)lock);
    cr_assert_eq(f.gpu, gpu, "GPU time %llu of %llu ns", (unsigned long long)f.gpu,
                 (unsigned long long)gpu);
    cr_assert_eq(f.release, release);
    pi_steps_free(&steps);
}
