/*
 * Integration: the writer's process samples and its report of what the
 * profiler's own threads cost. A program that computes, then sleeps, is
 * sampled at the configured interval while it computes and at no more than
 * the flush interval while idle; the profiler's CPU time in the end record
 * matches what /proc says those threads used.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

struct samples {
    uint64_t first_ns;
    uint64_t busy, idle; /* samples inside the computing and the sleeping windows */
    uint64_t profiler_cpu_ns;
};

/* windows in ms from the first sample: computing 100..900, sleeping 1500..2400 */
static void count_samples(const struct pi_reader *reader, const struct pi_event *ev,
                          struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    struct samples *s = context;
    if (ev->rec.kind == PI_REC_PROCESS_END)
        s->profiler_cpu_ns = ev->rec.arg[2];
    if (ev->rec.kind != PI_REC_PROC_SAMPLE)
        return;
    if (!s->first_ns)
        s->first_ns = ev->ts_ns;
    double ms = (double)(ev->ts_ns - s->first_ns) / 1e6;
    s->busy += ms >= 100 && ms < 900;
    s->idle += ms >= 1500 && ms < 2400;
}

Test(process_samples, configured_interval_while_busy_stretched_while_idle, .timeout = 60)
{
    char dir[256];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_spin_sleep"), "1000", "1500", NULL};
    char *env[] = {"PROFINJECT_SAMPLE_MS=10", NULL};
    struct run_result run;
    run_program(dir, argv, env, NULL, 0, &run);
    cr_assert(run.exited && run.status == 0, "%s", run.err);
    struct traced_file files[2];
    struct samples s = {0};
    cr_assert_eq(read_trace_dir(dir, files, 2, count_samples, &s), 1);
    /* every 10 ms for 800 ms: 80; fewer where the machine starves the writer (50 seen
     * with the two cores busy three times over), but never as few as the 100 ms of the
     * idle gap would give (8) */
    cr_assert_geq(s.busy, 30, "samples while computing: %lu", (unsigned long)s.busy);
    /* idle: the gap doubles to the 100 ms flush interval, so about 9 in 900 ms, never 90 */
    cr_assert_geq(s.idle, 5, "samples while idle: %lu", (unsigned long)s.idle);
    cr_assert_leq(s.idle, 25, "samples while idle: %lu", (unsigned long)s.idle);
    /* and the busy phase, shorter, has clearly more of them than the idle one */
    cr_assert_geq(s.busy, 2 * s.idle, "busy %lu, idle %lu", (unsigned long)s.busy,
                  (unsigned long)s.idle);
}

Test(process_samples, profiler_cpu_time_matches_proc, .timeout = 60)
{
    char dir[256];
    make_temp_dir(dir, sizeof(dir));
    /* a sample every millisecond gives the profiler's threads work to account for */
    char *argv[] = {(char *)test_program("prog_spin_sleep"), "400", "0", NULL};
    char *env[] = {"PROFINJECT_SAMPLE_MS=1", NULL};
    struct run_result run;
    run_program(dir, argv, env, NULL, 0, &run);
    cr_assert(run.exited && run.status == 0, "%s", run.err);
    uint64_t seen_by_proc = strtoull(run.out, NULL, 10);
    struct traced_file files[2];
    struct samples s = {0};
    cr_assert_eq(read_trace_dir(dir, files, 2, count_samples, &s), 1);
    cr_assert_gt(seen_by_proc, 0, "the profiler's threads used no CPU? %s", run.out);
    /* taken after the program's own reading: at least as much, plus the final flush */
    cr_assert_geq(s.profiler_cpu_ns, seen_by_proc, "trace %lu ns, /proc %lu ns",
                  (unsigned long)s.profiler_cpu_ns, (unsigned long)seen_by_proc);
    cr_assert_leq(s.profiler_cpu_ns, seen_by_proc + 30000000, "trace %lu ns, /proc %lu ns",
                  (unsigned long)s.profiler_cpu_ns, (unsigned long)seen_by_proc);
}

struct pss_reads {
    uint64_t last_ns, shortest_gap_ns;
    uint64_t samples, reads, bad;
};

static void count_pss_reads(const struct pi_reader *reader, const struct pi_event *ev,
                            struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    struct pss_reads *s = context;
    s->samples += ev->rec.kind == PI_REC_PROC_SAMPLE;
    if (ev->rec.kind != PI_REC_PROC_PSS)
        return;
    /* PSS divides the shared pages: never above the RSS of the same walk, never 0 */
    s->bad += ev->rec.arg[0] == 0 || ev->rec.arg[0] > ev->rec.arg[1] || ev->rec.arg[2] == 0;
    if (s->reads++ && (!s->shortest_gap_ns || ev->ts_ns - s->last_ns < s->shortest_gap_ns))
        s->shortest_gap_ns = ev->ts_ns - s->last_ns;
    s->last_ns = ev->ts_ns;
}

/* smaps_rollup walks every page table (7-8 ms for the example job's main process against
 * 1.5 us for statm): PSS is read at most once a second, whatever the sample interval */
Test(process_samples, pss_is_read_at_most_once_a_second, .timeout = 60)
{
    char dir[256];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_spin_sleep"), "2600", "0", NULL};
    char *env[] = {"PROFINJECT_SAMPLE_MS=10", NULL};
    struct run_result run;
    run_program(dir, argv, env, NULL, 0, &run);
    cr_assert(run.exited && run.status == 0, "%s", run.err);
    struct traced_file files[2];
    struct pss_reads s = {0};
    cr_assert_eq(read_trace_dir(dir, files, 2, count_pss_reads, &s), 1);
    /* about 100 ms in, then every second: 3 in 2.6 s (more would be a read per sample) */
    cr_assert_geq(s.reads, 2, "PSS reads: %lu", (unsigned long)s.reads);
    cr_assert_leq(s.reads, 4, "PSS reads: %lu", (unsigned long)s.reads);
    cr_assert_geq(s.shortest_gap_ns, 900000000u, "reads %lu ns apart",
                  (unsigned long)s.shortest_gap_ns);
    cr_assert_geq(s.samples, 10 * s.reads, "samples %lu, PSS reads %lu",
                  (unsigned long)s.samples, (unsigned long)s.reads);
    cr_assert_eq(s.bad, 0, "a PSS read above its RSS, or 0");
}
