/*
 * Unit: verdict rules on hand-made traces of a training loop. Waiting for
 * batches is input-bound whatever lock waits come with it (the GIL handed
 * to a relay thread that itself only waits); lock-bound needs a thread
 * busy enough to hold the lock.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pass/analysis.h"
#include "verdicts/verdict.h"
#include "synthetic_trace.h"

#define MS 1000000ull
#define STEPS 20
#define MAX_RECORDS 512

static struct pi_record records[MAX_RECORDS];
static uint32_t used;

static void add(uint16_t kind, uint16_t flags, uint32_t tid, uint64_t ts, uint64_t dur, uint64_t a0,
                uint64_t a1, uint64_t a2)
{
    cr_assert(used < MAX_RECORDS);
    records[used++] = (struct pi_record){kind, flags, tid, ts, dur, {a0, a1, a2}};
}

static void name_thread(uint32_t tid, uint32_t string_id, const char *name)
{
    used += synthetic_definition(records, used, PI_REC_STRING, string_id, name, strlen(name));
    add(PI_REC_THREAD_NAME, 0, tid, 1 * MS, 0, string_id, 0, 0);
}

/* a main thread receiving one batch a step through a pipe, then waiting @lock_ms in a semaphore */
static void training_loop(uint32_t main, uint64_t wait_ms, uint64_t lock_ms, uint64_t step_ms)
{
    add(PI_REC_FORK, 0, main, 2 * MS, 0, main + 100, 0, 0);
    add(PI_REC_FORK, 0, main, 2 * MS, 0, main + 101, 0, 0);
    for (uint64_t s = 0, t = 10 * MS; s < STEPS; s++, t += step_ms * MS) {
        add(PI_REC_IO, PI_IO_FLAGS(PI_IO_READ, PI_FD_PIPE, 0), main, t, wait_ms * MS, 5, 4096, 0);
        add(PI_REC_WAIT, 0, main, t + (wait_ms + 1) * MS, lock_ms * MS, PI_WAIT_SEM, 0, 0);
    }
    add(PI_REC_PROC_SAMPLE, 0, main, (10 + STEPS * step_ms) * MS, 0, 100 << 20, 0, 0);
}

static int verdict_of(struct pi_finding *findings)
{
    /* the job ended well: a trace without its end record is one of a process that died */
    uint64_t last = 0;
    for (uint32_t i = 0; i < used; i++)
        if (records[i].ts + records[i].dur > last)
            last = records[i].ts + records[i].dur;
    add(PI_REC_PROCESS_END, 0, (uint32_t)getpid(), last, 0, 0, PI_END_EXIT, 0);
    const char *path = synthetic_begin();
    uint8_t header[16384];
    synthetic_frame(header, synthetic_header(header, PI_FORMAT_VERSION));
    synthetic_records(records, used);
    synthetic_end();
    struct pi_analysis a;
    struct pi_analysis_options options = {0};
    char *paths[1] = {(char *)path};
    cr_assert_eq(pi_analysis_run(&a, &options, paths, 1), 0);
    cr_assert_eq(a.processes[0].header.pid, getpid());
    int n = pi_verdict(&a, findings);
    pi_analysis_free(&a);
    return n;
}

static int has(const struct pi_finding *findings, int n, const char *kind)
{
    for (int i = 0; i < n; i++)
        if (strcmp(findings[i].kind, kind) == 0)
            return 1;
    return 0;
}

Test(verdict, batches_waited_for_through_a_relay_are_input_bound_not_lock_bound)
{
    uint32_t main = (uint32_t)getpid(), relay = main + 1;
    used = 0;
    name_thread(relay, 1, "pt_data_pin");
    /* 30 ms of 50 waiting for the batch, 12 ms handing the GIL back and forth */
    training_loop(main, 30, 12, 50);
    for (uint64_t s = 0, t = 10 * MS; s < STEPS; s++, t += 50 * MS) /* the relay waits for workers */
        add(PI_REC_IO, PI_IO_FLAGS(PI_IO_POLL, PI_FD_PIPE, 0), relay, t, 45 * MS, 6, 1, 0);
    struct pi_finding findings[PI_MAX_FINDINGS];
    int n = verdict_of(findings);
    cr_assert_str_eq(findings[0].kind, "input-bound", "%s: %s", findings[0].kind, findings[0].summary);
    cr_assert_float_eq(findings[0].score, 0.6, 0.05, "%f", findings[0].score);
    cr_assert(!has(findings, n, "lock-bound"), "%s", findings[1].summary);
}

Test(verdict, lock_waits_against_a_busy_thread_are_lock_bound)
{
    uint32_t main = (uint32_t)getpid(), logger = main + 2;
    used = 0;
    name_thread(logger, 1, "metrics");
    training_loop(main, 1, 25, 50);
    /* a thread that computes the whole run: it holds the GIL */
    add(PI_REC_THREAD_START, 0, logger, 10 * MS, 0, main, 0, 0);
    add(PI_REC_MARK, 0, logger, (10 + STEPS * 50) * MS, 0, 0, 0, 0);
    struct pi_finding findings[PI_MAX_FINDINGS];
    int n = verdict_of(findings);
    cr_assert(n >= 1);
    cr_assert_str_eq(findings[0].kind, "lock-bound", "%s: %s", findings[0].kind, findings[0].summary);
    cr_assert(!has(findings, n, "input-bound"));
}

static struct pi_finding finding(const char *kind, int pid, double score)
{
    struct pi_finding f = {.kind = kind, .pid = pid, .score = score};
    snprintf(f.summary, sizeof(f.summary), "%s of %d", kind, pid);
    return f;
}

/* Waits that another finding explains rank after it, whatever their share: the others'
 * collective waits behind the straggler, synchronisation behind a busy GPU. */
Test(verdict, a_wait_ranks_after_the_finding_that_explains_it)
{
    struct pi_finding f[4] = {
        finding("lock-bound", 1000, 0.23), finding("sync-bound", 1000, 0.22),
        finding("straggler", 1003, 0.21), finding("rss-growth", 1000, 0.1)};
    pi_verdict_causes_first(f, 4);
    cr_assert_str_eq(f[0].kind, "straggler");
    cr_assert_str_eq(f[1].kind, "lock-bound");
    cr_assert_str_eq(f[2].kind, "sync-bound");
    cr_assert_str_eq(f[3].kind, "rss-growth");
    cr_assert(strstr(f[1].summary, "behind the straggler finding of pid 1003"), "%s", f[1].summary);

    struct pi_finding g[2] = {finding("sync-bound", 7, 0.6), finding("gpu-bound", 7, 0.4)};
    pi_verdict_causes_first(g, 2);
    cr_assert_str_eq(g[0].kind, "gpu-bound");
    cr_assert_str_eq(g[1].kind, "sync-bound");
}

/* The straggler's own waits, and another process's GPU, explain nothing of a wait. */
Test(verdict, a_wait_that_nothing_explains_keeps_its_place)
{
    struct pi_finding f[2] = {finding("lock-bound", 1003, 0.3), finding("straggler", 1003, 0.2)};
    struct pi_finding g[2] = {finding("sync-bound", 1, 0.6), finding("gpu-bound", 2, 0.4)};
    pi_verdict_causes_first(f, 2);
    pi_verdict_causes_first(g, 2);
    cr_assert_str_eq(f[0].summary, "lock-bound of 1003");
    cr_assert_str_eq(f[1].kind, "straggler");
    cr_assert_str_eq(g[0].summary, "sync-bound of 1");
    cr_assert_str_eq(g[1].kind, "gpu-bound");
}
