/*
 * Unit: summary mode's parts in the recorder core, driven directly: the
 * aggregate table (what it emits reads back through the analyzer's checks
 * with the counts and buckets of the values put in), the flight ring, and
 * the slow-step trigger.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "core/flight_ring.h"
#include "core/step_trigger.h"
#include "core/summary_table.h"
#include "profinject/histogram_buckets.h"
#include "profinject/summary_policy.h"
#include "reader/summary_record.h"

static struct pi_summary_key wait_key(uint32_t tid)
{
    struct pi_summary_key k = {PI_REC_WAIT, 0, tid, {PI_WAIT_MUTEX, 0x1000, 0}};
    return k;
}

Test(summary_table, emitted_summary_reads_back)
{
    struct pi_summary_table t;
    cr_assert_eq(pi_summary_table_init(&t, 64), 0);
    struct pi_summary_key k = wait_key(7);
    uint64_t values[] = {100, 100, 5000, 123456, 7};
    uint64_t total = 0;
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(pi_summary_table_add(&t, &k, 1000 + i, 10, values[i], 8), 0);
        total += values[i];
    }
    struct pi_summary_key other = wait_key(8); /* another thread: another summary */
    cr_assert_eq(pi_summary_table_add(&t, &other, 2000, 10, 1, 0), 0);
    cr_assert_eq(t.used, 2);
    struct pi_summary_entry *e = NULL;
    for (uint32_t i = 0; i < t.capacity; i++)
        if (t.entries[i].used && t.entries[i].key.tid == 7)
            e = &t.entries[i];
    cr_assert(e);
    struct pi_record out[64];
    uint32_t slots = pi_summary_entry_slots(e);
    cr_assert_eq(pi_summary_entry_emit(e, out), slots);
    cr_assert_eq(out[0].kind, PI_REC_SUMMARY);
    cr_assert_eq(out[0].tid, 7);
    cr_assert_eq(out[0].ts, 1000);
    cr_assert_eq(out[0].dur, 14); /* first start to last end */
    struct pi_summary s;
    const char *why = "";
    uint64_t words[PI_BUCKET_COUNT];
    cr_assert_eq(pi_summary_parse(out, slots - 1, PI_FORMAT_VERSION, words, &s, &why), 0, "%s",
                 why);
    cr_assert_eq(s.count, 5);
    cr_assert_eq(s.body.total_ns, total);
    cr_assert_eq(s.body.min_ns, 7);
    cr_assert_eq(s.body.max_ns, 123456);
    cr_assert_eq(s.body.bytes, 40);
    cr_assert_eq(s.body.bucket_count, 4); /* 7, 100 (twice), 5000, 123456 */
    for (uint32_t i = 0; i < s.body.bucket_count; i++) {
        uint32_t index = PI_SUMMARY_BUCKET_INDEX(s.buckets[i]);
        uint64_t expect = 0;
        for (int v = 0; v < 5; v++)
            expect += pi_bucket_of(values[v]) == index;
        cr_assert_eq(PI_SUMMARY_BUCKET_COUNT(s.buckets[i]), expect, "bucket %u", index);
    }
    /* emptied for the next interval, key kept */
    cr_assert_eq(e->count, 0);
    cr_assert(e->used);
    pi_summary_table_free(&t);
}

Test(summary_table, full_table_refuses_instead_of_losing)
{
    struct pi_summary_table t;
    cr_assert_eq(pi_summary_table_init(&t, 16), 0);
    int refused = 0;
    for (uint32_t tid = 1; tid <= 32; tid++) {
        struct pi_summary_key k = wait_key(tid);
        refused += pi_summary_table_add(&t, &k, 1, 1, 1, 0) != 0;
    }
    cr_assert_eq(t.used, 12, "three quarters of the slots");
    cr_assert_eq(refused, 20);
    pi_summary_table_forget(&t);
    cr_assert_eq(t.used, 0);
    pi_summary_table_free(&t);
}

static uint64_t seen_ts[64];
static int seen;

static void collect(void *context, const struct pi_record *r)
{
    (void)context;
    seen_ts[seen++] = r->ts;
}

Test(flight_ring, replays_the_last_records_in_a_range)
{
    struct pi_flight_ring ring;
    pi_flight_ring_init(&ring, 8);
    for (uint64_t ts = 1; ts <= 20; ts++) {
        struct pi_record r = {PI_REC_GPU_LAUNCH, 0, 1, ts, 0, {0, 0, 0}};
        cr_assert_eq(pi_flight_ring_push(&ring, &r), 0);
    }
    seen = 0;
    /* only the last 8 are kept: 13..20; of those, [15, 18) */
    cr_assert_eq(pi_flight_ring_replay(&ring, 15, 18, collect, NULL), 3);
    cr_assert_eq(seen_ts[0], 15);
    cr_assert_eq(seen_ts[2], 17);
    seen = 0;
    cr_assert_eq(pi_flight_ring_replay(&ring, 0, UINT64_MAX, collect, NULL), 8);
    cr_assert_eq(seen_ts[0], 13);
    pi_flight_ring_clear(&ring);
    cr_assert_eq(pi_flight_ring_replay(&ring, 0, UINT64_MAX, collect, NULL), 0);
    pi_flight_ring_free(&ring);
}

/* The process 42's record @r, as summary mode's writer gives it to the trigger. */
static int see(struct pi_step_trigger *t, const struct pi_record *r, uint64_t *start,
               uint64_t *end)
{
    struct pi_summary_class k;
    pi_summary_classify(r, 42, 0, &k);
    return pi_step_trigger_record(t, k.step, r, start, end);
}

static int step(struct pi_step_trigger *t, uint64_t start, uint64_t dur)
{
    struct pi_record r = {PI_REC_NVTX_RANGE, 0, 42, start, dur, {1, 0, 0}};
    uint64_t s, e;
    return see(t, &r, &s, &e);
}

Test(step_trigger, slow_step_after_enough_history)
{
    struct pi_step_trigger t;
    pi_step_trigger_init(&t);
    uint64_t at = 0;
    /* a slow step before PI_STEP_MIN_HISTORY steps: nothing to compare it with */
    for (int i = 0; i < PI_STEP_MIN_HISTORY - 1; i++, at += 2000)
        cr_assert_eq(step(&t, at, 1000 + (uint64_t)(i % 10) * 10), 0);
    cr_assert_eq(step(&t, at, 100000), 0);
    at += 200000;
    for (int i = 0; i < 200; i++, at += 2000)
        step(&t, at, 1000 + (uint64_t)(i % 10) * 10);
    /* within noise of the others: above their p99 but not a quarter above the median */
    cr_assert_eq(step(&t, at, 1100), 0);
    at += 2000;
    cr_assert_eq(step(&t, at, 5000), 1, "5 times the median");
    /* nested ranges and other threads' are no steps */
    struct pi_record nested = {PI_REC_NVTX_RANGE, 0, 42, at, 90000, {1, 1, 0}};
    struct pi_record other = {PI_REC_NVTX_RANGE, 0, 43, at, 90000, {1, 0, 0}};
    uint64_t s, e;
    cr_assert_eq(see(&t, &nested, &s, &e), 0);
    cr_assert_eq(see(&t, &other, &s, &e), 0);
}

/* The main thread's 4-byte read from a pipe: a DataLoader batch's length arriving. */
static int batch_arrives(struct pi_step_trigger *t, uint64_t at, uint64_t *start, uint64_t *end)
{
    struct pi_record r = {PI_REC_IO, PI_IO_FLAGS(PI_IO_READ, PI_FD_PIPE, 0), 42, at - 10, 10,
                          {5, 4, 0}};
    return see(t, &r, start, end);
}

Test(step_trigger, data_loader_batches_make_steps)
{
    struct pi_step_trigger t;
    pi_step_trigger_init(&t);
    uint64_t at = 1000, start = 0, end = 0, previous = 0;
    for (int i = 0; i < 150; i++) {
        cr_assert_eq(batch_arrives(&t, at, &start, &end), 0);
        previous = at;
        at += 1000 + (uint64_t)(i % 7);
    }
    /* a read of other bytes (the batch itself) is no boundary */
    struct pi_record payload = {PI_REC_IO, PI_IO_FLAGS(PI_IO_READ, PI_FD_PIPE, 0), 42,
                                previous + 20, 10, {5, 430, 0}};
    cr_assert_eq(see(&t, &payload, &start, &end), 0);
    at = previous + 10000; /* this step takes 10 times the others */
    cr_assert_eq(batch_arrives(&t, at, &start, &end), 1);
    cr_assert_eq(end, at);
    cr_assert_eq(start, previous, "the step runs from the previous batch's arrival");
}

/* A regular file read, by a process's main thread and by a fork child's: both count it under
 * its directory (an import's modules, a dataset's samples, are read once each); neither's batch
 * reads are steps in the fork child. */
Test(summary_policy, regular_files_count_by_directory)
{
    struct pi_record read = {PI_REC_IO, PI_IO_FLAGS(PI_IO_READ, PI_FD_FILE, 0), 42, 10, 10,
                             {5, 4096, 7}};
    struct pi_summary_class k;
    for (int fork_child = 0; fork_child < 2; fork_child++) {
        pi_summary_classify(&read, 42, fork_child, &k);
        cr_assert_eq(k.role, PI_SUMMARY_COUNTED);
        cr_assert(k.by_directory);
        cr_assert_eq(k.key[2], 7, "the path, which summary mode replaces by its directory");
        cr_assert_eq(k.bytes, 4096);
    }
    struct pi_record batch = {PI_REC_IO, PI_IO_FLAGS(PI_IO_READ, PI_FD_PIPE, 0), 42, 10, 10,
                              {5, 4, 0}};
    pi_summary_classify(&batch, 42, 0, &k);
    cr_assert_eq(k.step, PI_STEP_BOUNDARY);
    pi_summary_classify(&batch, 42, 1, &k);
    cr_assert_eq(k.step, PI_STEP_NONE, "a worker's index reads are no steps");
    cr_assert_not(k.by_directory, "a pipe is no file");
}

/* A DataLoader worker's loop: its poll for the next index stays (the analyzer reads its idle
 * time there), the two reads that take the index after it are counted; a process's own main
 * thread keeps both, its batch receipts being its steps. */
Test(summary_policy, a_worker_keeps_its_wait_for_an_index_and_counts_the_reads)
{
    struct pi_record poll = {PI_REC_IO, PI_IO_FLAGS(PI_IO_POLL, PI_FD_PIPE, 0), 42, 10, 30000000,
                             {27, 1, 0}};
    struct pi_record read = {PI_REC_IO, PI_IO_FLAGS(PI_IO_READ, PI_FD_PIPE, 0), 42, 10, 1500,
                             {27, 99, 0}};
    struct pi_summary_class k;
    pi_summary_classify(&poll, 42, 1, &k);
    cr_assert_eq(k.role, PI_SUMMARY_IN_FULL, "a worker's wait for work");
    pi_summary_classify(&read, 42, 1, &k);
    cr_assert_eq(k.role, PI_SUMMARY_COUNTED_AFTER_FIRST, "a worker's read of its index");
    cr_assert_eq(k.bytes, 99);
    for (int i = 0; i < 2; i++) {
        pi_summary_classify(i ? &read : &poll, 42, 0, &k);
        cr_assert_eq(k.role, PI_SUMMARY_IN_FULL, "the loop's own receipts make its steps");
    }
}

/* The directory a path is counted under: its own, or an installed package's top directory. */
Test(summary_policy, packages_count_under_their_top_directory)
{
    struct {
        const char *path, *directory;
    } cases[] = {
        {"/data/train/sample_000001.bin", "/data/train/"},
        {"/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py",
         "/venv/lib/python3.11/site-packages/torch/"},
        {"/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so",
         "/venv/lib/python3.11/site-packages/torch/"},
        {"/venv/lib/python3.11/site-packages/six.py", "/venv/lib/python3.11/site-packages/"},
        {"/usr/lib/python3/dist-packages/numpy/core/_multiarray_umath.so",
         "/usr/lib/python3/dist-packages/numpy/"},
        {"/usr/lib/python3.11/json/decoder.py", "/usr/lib/python3.11/json/"},
        {"/usr/lib/python3.11/os.py", "/usr/lib/python3.11/"},
        {"/usr/lib/python3.11/__pycache__/os.cpython-311.pyc", "/usr/lib/python3.11/"},
        {"/venv/lib/python3.11/site-packages/__pycache__/six.cpython-311.pyc",
         "/venv/lib/python3.11/site-packages/"},
        {"/venv/lib/python3.11/site-packages/torch/__pycache__/functional.cpython-311.pyc",
         "/venv/lib/python3.11/site-packages/torch/"},
        {"/dev/shm/torch_1234_5678_0", "/dev/shm/"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        size_t n = pi_summary_directory_length(cases[i].path, strlen(cases[i].path));
        cr_assert_eq(n, strlen(cases[i].directory), "%s", cases[i].path);
        cr_assert_eq(strncmp(cases[i].path, cases[i].directory, n), 0, "%s", cases[i].path);
    }
    cr_assert_eq(pi_summary_directory_length("relative", 8), 0, "no directory");
    cr_assert_eq(pi_summary_directory_length("/opt/lib/python", 15), 9, "no root past its name");
}
