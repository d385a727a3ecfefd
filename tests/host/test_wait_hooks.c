/*
 * Integration: the sleep hooks against prog_sleeps, which times each of its
 * five sleeps by its own clock.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

struct sleeps {
    int pid;
    int count;
    uint64_t ns[8];
};

static void collect_sleeps(const struct pi_reader *reader, const struct pi_event *ev,
                           struct traced_file *file, void *context)
{
    (void)reader;
    struct sleeps *s = context;
    const struct pi_record *r = &ev->rec;
    if (r->kind != PI_REC_WAIT || r->arg[0] != PI_WAIT_SLEEP || (int)r->tid != file->pid)
        return;
    cr_assert_eq(r->flags & PI_FLAG_FAILED, 0, "no sleep was cut short");
    if (s->count < 8)
        s->ns[s->count] = ev->dur_ns;
    s->count++;
}

Test(wait_hooks, every_kind_of_sleep_is_recorded_as_long_as_it_slept, .timeout = 60)
{
    char dir[64];
    char *argv[] = {(char *)test_program("prog_sleeps"), NULL};
    struct run_result result;
    run_in_new_dir(dir, sizeof(dir), argv, &result);
    cr_assert(result.exited && result.status == 0, "%s", result.err);
    struct traced_file files[2];
    struct sleeps s;
    memset(&s, 0, sizeof(s));
    cr_assert_eq(read_trace_dir(dir, files, 2, collect_sleeps, &s), 1);
    /* nanosleep, clock_nanosleep twice, usleep, sleep: each once, none twice (glibc's
     * sleep and usleep sleep through its nanosleep) */
    cr_assert_eq(s.count, 5, "%d sleep records", s.count);
    char *line = result.out;
    for (int i = 0; i < 5; i++) {
        long long took = strtoll(line, &line, 10);
        /* the program's clock reads bracket the hook's; the trace's ticks become ns at
         * a measured rate (0.1% allowed) */
        uint64_t slack = (uint64_t)took / 1000;
        cr_assert_leq(s.ns[i], (uint64_t)took + slack, "sleep %d: %llu ns recorded, %lld taken",
                      i, (unsigned long long)s.ns[i], took);
        cr_assert_geq(s.ns[i] + slack + 1000000, (uint64_t)took,
                      "sleep %d: %llu ns recorded, %lld taken", i, (unsigned long long)s.ns[i],
                      took);
    }
}
