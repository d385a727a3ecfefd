/*
 * Unit: the process tree's host memory peak over hand-made samples. A
 * parent holds 220 MiB, then forks three children that share it: from
 * then on each of the four has a quarter of it as PSS (55 MiB) and all of
 * it as RSS. The tree never held more than 220 MiB. The parent reads its
 * PSS a second after the forks, its children right after them: a sum of
 * the latest figures at any moment would add the parent's 220 MiB from
 * before the forks to the children's quarters (385 MiB).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "analysis/host/host_memory.h"
#include "analysis/model/model.h"

#define MS 1000000ull
#define MIB (1ull << 20)

static struct pi_analysis *tree(size_t processes)
{
    struct pi_analysis *a = calloc(1, sizeof(*a));
    cr_assert(a);
    a->processes = calloc(processes, sizeof(*a->processes));
    cr_assert(a->processes);
    a->process_count = processes;
    return a;
}

static void release(struct pi_analysis *a)
{
    for (size_t i = 0; i < a->process_count; i++) {
        pi_series_free(&a->processes[i].rss);
        pi_series_free(&a->processes[i].pss);
    }
    free(a->processes);
    free(a);
}

/* a process alive from @start_ms to @end_ms with @rss_mib of RSS sampled every 100 ms */
static void lives(struct pi_process_info *p, uint64_t start_ms, uint64_t end_ms, uint64_t rss_mib)
{
    p->header.start_monotonic_ns = start_ms * MS;
    p->start_ns = start_ms * MS;
    p->end_ns = end_ms * MS;
    for (uint64_t t = start_ms + 50; t < end_ms; t += 100)
        pi_series_add(&p->rss, t * MS, rss_mib * MIB);
}

static void reads_pss(struct pi_process_info *p, uint64_t at_ms, uint64_t pss_mib)
{
    pi_series_add(&p->pss, at_ms * MS, pss_mib * MIB);
}

/* the parent (0) and, forked at 300, 310 and 320 ms, three children sharing its 220 MiB */
static struct pi_analysis *shared_tree(void)
{
    struct pi_analysis *a = tree(4);
    lives(&a->processes[0], 0, 5000, 220);
    reads_pss(&a->processes[0], 100, 220); /* alone */
    for (uint64_t t = 1200; t < 5000; t += 1100)
        reads_pss(&a->processes[0], t, 55);
    for (int c = 1; c <= 3; c++) {
        uint64_t start = 290 + 10 * (uint64_t)c;
        lives(&a->processes[c], start, 5000, 220);
        for (uint64_t t = 400 + 10 * (uint64_t)c; t < 5000; t += 1100)
            reads_pss(&a->processes[c], t, 55);
    }
    return a;
}

Test(host_memory, a_fork_does_not_count_the_parents_pages_twice)
{
    struct pi_analysis *a = shared_tree();
    pi_host_memory_finish(a);
    struct pi_host_memory *m = &a->host_memory;
    cr_assert_eq(m->pss_peak_bytes, 220 * MIB, "PSS peak %.1f MiB, the tree held 220",
                 (double)m->pss_peak_bytes / MIB);
    cr_assert_eq(m->pss_processes_unread, 0);
    /* the RSS added up counts the shared pages once in each process */
    cr_assert_eq(m->rss_peak_bytes, 4 * 220 * MIB);
    cr_assert_eq(m->processes_alive, 4);
    release(a);
}

Test(host_memory, the_sum_counts_once_every_process_read_after_the_last_start)
{
    struct pi_analysis *a = shared_tree();
    /* the parent's private memory grows by 100 MiB after the forks */
    for (uint64_t t = 1200; t < 5000; t += 1100)
        a->processes[0].pss.v[(t - 1200) / 1100 + 1] = (55 + 100) * MIB;
    pi_host_memory_finish(a);
    cr_assert_eq(a->host_memory.pss_peak_bytes, (220 + 100) * MIB);
    cr_assert_eq(a->host_memory.pss_processes_alive, 4);
    cr_assert_geq(a->host_memory.pss_peak_ns, 1200 * MS, "once the parent read it again");
    release(a);
}

Test(host_memory, moments_with_a_process_that_never_read_its_pss_are_left_out)
{
    struct pi_analysis *a = tree(2);
    lives(&a->processes[0], 0, 3000, 300);
    reads_pss(&a->processes[0], 100, 120);
    reads_pss(&a->processes[0], 1200, 120);
    /* a fork child that exec'd within 100 ms: its RSS is its parent's, shared */
    lives(&a->processes[1], 1500, 1560, 300);
    pi_host_memory_finish(a);
    cr_assert_eq(a->host_memory.pss_peak_bytes, 120 * MIB);
    cr_assert_eq(a->host_memory.pss_processes_alive, 1);
    cr_assert_eq(a->host_memory.pss_processes_unread, 1);
    release(a);
}

/* two processes reading their PSS half a second apart, and a short process started
 * every 300 ms (a job that runs a command now and then): each start comes between
 * the two's reads, but the short ones are gone before the next read */
Test(host_memory, short_processes_do_not_hide_the_peak)
{
    enum { SHORT = 30 };
    struct pi_analysis *a = tree(2 + SHORT);
    lives(&a->processes[0], 0, 10000, 400);
    lives(&a->processes[1], 0, 10000, 400);
    for (uint64_t t = 100; t < 10000; t += 1100) {
        reads_pss(&a->processes[0], t, 100);
        reads_pss(&a->processes[1], t + 550, 50);
    }
    for (int k = 0; k < SHORT; k++)
        lives(&a->processes[2 + k], 200 + 300 * (uint64_t)k, 280 + 300 * (uint64_t)k, 5);
    pi_host_memory_finish(a);
    cr_assert_eq(a->host_memory.pss_peak_bytes, 150 * MIB, "PSS peak %.1f MiB",
                 (double)a->host_memory.pss_peak_bytes / MIB);
    cr_assert_eq(a->host_memory.pss_processes_unread, SHORT);
    release(a);
}

Test(host_memory, traces_without_pss_have_the_rss_figure_only)
{
    struct pi_analysis *a = tree(2);
    lives(&a->processes[0], 0, 3000, 300);
    lives(&a->processes[1], 1000, 2000, 100);
    pi_host_memory_finish(a);
    cr_assert_eq(a->host_memory.pss_peak_bytes, 0);
    cr_assert_eq(a->host_memory.rss_peak_bytes, 400 * MIB);
    cr_assert_eq(a->host_memory.processes_alive, 2);
    release(a);
}
