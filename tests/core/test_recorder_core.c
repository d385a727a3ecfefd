/*
 * Unit: the recorder core driven directly, without interposition (each
 * Criterion test runs in its own process, so each starts a fresh recorder).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "core/recorder.h"

static struct pi_config test_config(const char *dir, uint32_t buffers, uint32_t records)
{
    struct pi_config config;
    pi_config_from_env(&config);
    snprintf(config.output_dir, sizeof(config.output_dir), "%s", dir);
    config.buffer_count = buffers;
    config.buffer_records = records;
    config.flush_interval_ns = 3600000000000ull; /* only explicit flushes */
    config.sample_interval_ns = 0;
    return config;
}

struct mark_count {
    uint64_t marks, sum;
};

static void count_marks(const struct pi_reader *reader, const struct pi_event *ev,
                        struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    struct mark_count *c = context;
    if (ev->rec.kind == PI_REC_MARK) {
        c->marks++;
        c->sum += ev->rec.arg[0];
    }
}

Test(recorder_core, drops_are_counted_never_waited_for, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    struct pi_config config = test_config(dir, 2, 64);
    cr_assert_eq(pi_recorder_start(&config), 0);
    const uint64_t emitted = 1000000;
    for (uint64_t i = 0; i < emitted; i++)
        pi_emit(PI_REC_MARK, 0, pi_clock_ticks(), 0, 1, 0, 0);
    pi_recorder_stop(PI_END_EXIT, 0);

    struct pi_recorder_stats stats;
    pi_recorder_get_stats(&stats);
    struct traced_file files[4];
    struct mark_count count = {0};
    cr_assert_eq(read_trace_dir(dir, files, 4, count_marks, &count), 1);
    cr_assert_not(files[0].read_error, "%s", files[0].error);
    cr_assert_eq(count.marks + files[0].lost, emitted);
    cr_assert_gt(files[0].lost, 0, "two tiny buffers cannot hold a million events");
    cr_assert_eq(stats.records_lost, files[0].lost, "writer statistics agree with the file");
}

Test(recorder_core, flush_sync_makes_records_readable_while_running)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    struct pi_config config = test_config(dir, 8, 1024);
    cr_assert_eq(pi_recorder_start(&config), 0);
    for (uint64_t i = 1; i <= 10; i++)
        pi_emit(PI_REC_MARK, 0, pi_clock_ticks(), 0, i, 0, 0);
    cr_assert_eq(pi_recorder_flush_sync(2000), 0);
    struct traced_file files[4];
    struct mark_count count = {0};
    cr_assert_eq(read_trace_dir(dir, files, 4, count_marks, &count), 1);
    cr_assert_eq(count.marks, 10);
    cr_assert_eq(count.sum, 55);
    cr_assert_not(files[0].has_end, "the process is still running");
    pi_recorder_stop(PI_END_EXIT, 0);
    pi_recorder_stop(PI_END_EXIT, 0); /* a second stop is harmless */
}

static void *emit_and_exit(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < 100; i++)
        pi_emit(PI_REC_MARK, 0, pi_clock_ticks(), 0, 1000, 0, 0);
    pi_thread_exit();
    return NULL;
}

Test(recorder_core, exiting_thread_hands_over_its_buffer)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    struct pi_config config = test_config(dir, 8, 1024);
    cr_assert_eq(pi_recorder_start(&config), 0);
    pthread_t thread;
    pthread_create(&thread, NULL, emit_and_exit, NULL);
    pthread_join(thread, NULL);
    /* no periodic flush: only the retired buffer can bring these records */
    pi_recorder_stop(PI_END_EXIT, 0);
    struct traced_file files[4];
    struct mark_count count = {0};
    cr_assert_eq(read_trace_dir(dir, files, 4, count_marks, &count), 1);
    cr_assert_eq(count.marks, 100);
    cr_assert_eq(count.sum, 100000);
}

Test(recorder_core, interned_names_arrive_before_their_records)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    struct pi_config config = test_config(dir, 8, 1024);
    cr_assert_eq(pi_recorder_start(&config), 0);
    uint32_t id = pi_intern_cstr("train_step");
    cr_assert_neq(id, 0);
    cr_assert_eq(pi_intern_cstr("train_step"), id);
    pi_emit(PI_REC_MARK, 0, pi_clock_ticks(), 0, 7, id, 0);
    pi_recorder_stop(PI_END_EXIT, 0);

    char error[600];
    struct traced_file files[4];
    cr_assert_eq(read_trace_dir(dir, files, 4, NULL, NULL), 1);
    struct pi_reader *reader = pi_reader_open(files[0].path, error, sizeof(error));
    cr_assert_not_null(reader, "%s", error);
    struct pi_event ev;
    int found = 0;
    while (pi_reader_next(reader, &ev) == PI_READ_EVENT)
        if (ev.rec.kind == PI_REC_MARK) {
            const char *name = pi_reader_string(reader, ev.rec.arg[1]);
            cr_assert_not_null(name, "string defined before use");
            cr_assert_str_eq(name, "train_step");
            found++;
        }
    pi_reader_close(reader);
    cr_assert_eq(found, 1);
}

Test(recorder_core, timestamps_map_to_monotonic_time)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    struct pi_config config = test_config(dir, 8, 1024);
    config.flush_interval_ns = 20000000; /* sync points every 20 ms */
    cr_assert_eq(pi_recorder_start(&config), 0);
    /* the monotonic time just before and just after each mark's tick read: a
     * thread preempted between two reads (ctest runs suites side by side) is
     * no clock error, so the mark must fall within the two, 20 us either side */
    uint64_t before[5], after[5];
    for (int i = 0; i < 5; i++) {
        before[i] = pi_clock_ns(CLOCK_MONOTONIC);
        uint64_t ticks = pi_clock_ticks();
        after[i] = pi_clock_ns(CLOCK_MONOTONIC);
        pi_emit(PI_REC_MARK, 0, ticks, 0, (uint64_t)i, 0, 0);
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
    }
    pi_recorder_stop(PI_END_EXIT, 0);
    char error[600];
    struct traced_file files[4];
    cr_assert_eq(read_trace_dir(dir, files, 4, NULL, NULL), 1);
    struct pi_reader *reader = pi_reader_open(files[0].path, error, sizeof(error));
    cr_assert_not_null(reader, "%s", error);
    struct pi_event ev;
    while (pi_reader_next(reader, &ev) == PI_READ_EVENT) {
        if (ev.rec.kind != PI_REC_MARK)
            continue;
        int64_t early = (int64_t)before[ev.rec.arg[0]] - (int64_t)ev.ts_ns;
        int64_t late = (int64_t)ev.ts_ns - (int64_t)after[ev.rec.arg[0]];
        cr_assert(early < 20000 && late < 20000,
                  "mark %lu is %ld ns before / %ld ns after CLOCK_MONOTONIC's reads around it",
                  (unsigned long)ev.rec.arg[0], (long)early, (long)late);
    }
    pi_reader_close(reader);
}
