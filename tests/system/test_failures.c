/*
 * Integration: the profiler never harms the host process. Each failure
 * gives one "profinject:" line on stderr and the program's own output and
 * exit status.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "helpers.h"

#define MAX_FILES 16

Test(failures, exit_status_and_output_pass_through)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_status"), "42", "1000", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited);
    cr_assert_eq(result.status, 42);
    cr_assert_str_eq(result.out, "ok\n");
    cr_assert_str_eq(result.err, "", "unexpected stderr: %s", result.err);
    struct traced_file files[MAX_FILES];
    cr_assert_eq(read_trace_dir(dir, files, MAX_FILES, NULL, NULL), 1);
    cr_assert(files[0].has_end && files[0].end_reason == PI_END_EXIT);
    cr_assert_eq(files[0].end_status, 42, "the trace records the exit status");
}

Test(failures, unwritable_output_directory)
{
    char *argv[] = {(char *)test_program("prog_status"), "7", "100000", NULL};
    struct run_result result;
    /* a directory below a regular file can never be created, even by root */
    run_program("/dev/null/traces", argv, NULL, NULL, 0, &result);
    cr_assert(result.exited);
    cr_assert_eq(result.status, 7);
    cr_assert_str_eq(result.out, "ok\n");
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: "), 1, "stderr: %s", result.err);
    cr_assert_eq(count_lines_with_prefix(result.err, ""), 1, "exactly one line: %s", result.err);
    cr_assert(strstr(result.err, "PROFINJECT_OUTPUT"), "the message says what to do");
}

static void limit_file_size(void)
{
    struct rlimit limit = {1 << 20, 1 << 20};
    setrlimit(RLIMIT_FSIZE, &limit);
}

Test(failures, file_size_limit_reached, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    /* 2M poorly compressible marks need far more than 1 MiB */
    char *argv[] = {(char *)test_program("prog_status"), "3", "2000000", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, limit_file_size, 0, &result);
    cr_assert(result.exited, "killed by signal %d (SIGXFSZ must not reach the program)",
              result.status);
    cr_assert_eq(result.status, 3);
    cr_assert_str_eq(result.out, "ok\n");
    /* said once; on a busy machine the writer may also fall behind 2M marks made as fast as
     * one thread can before the limit stops it, which is said apart */
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: cannot write trace file "), 1,
                 "stderr: %s", result.err);
    cr_assert(strstr(result.err, "File too large"), "stderr: %s", result.err);
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: ") -
                     count_lines_with_prefix(result.err, "profinject: records dropped "),
                 1, "nothing else said: %s", result.err);

    struct traced_file files[MAX_FILES];
    int n = read_trace_dir(dir, files, MAX_FILES, NULL, NULL);
    cr_assert_eq(n, 1);
    cr_assert_not(files[0].read_error, "%s", files[0].error);
    cr_assert_gt(files[0].counts[PI_REC_MARK], 0, "frames before the limit are readable");
}

struct crash_marks {
    uint64_t before_crash;
};

static void count_crash_marks(const struct pi_reader *reader, const struct pi_event *ev,
                              struct traced_file *file, void *context)
{
    (void)file;
    struct crash_marks *m = context;
    const char *name = ev->rec.kind == PI_REC_MARK ? pi_reader_string(reader, ev->rec.arg[1]) : 0;
    if (name && strcmp(name, "before-crash") == 0)
        m->before_crash++;
}

Test(failures, segfault_runs_the_application_handler_and_keeps_the_trace, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_segv"), NULL};
    /* no periodic flush during the run: only the signal path can write */
    char *env[] = {"PROFINJECT_FLUSH_MS=600000", NULL};
    struct run_result result;
    run_program(dir, argv, env, NULL, 0, &result);
    cr_assert_not(result.exited);
    cr_assert_eq(result.status, 11, "died of signal %d", result.status);
    cr_assert_str_eq(result.out, "handler ran\n");

    struct traced_file files[MAX_FILES];
    struct crash_marks marks = {0};
    int n = read_trace_dir(dir, files, MAX_FILES, count_crash_marks, &marks);
    cr_assert_eq(n, 1);
    cr_assert_not(files[0].read_error, "%s", files[0].error);
    cr_assert_eq(marks.before_crash, 500);
    cr_assert(files[0].has_end && files[0].end_reason == PI_END_SIGNAL &&
                  files[0].end_status == 11,
              "the trace ends with death by SIGSEGV");
}

Test(failures, disabled_by_environment)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_status"), "0", "1000", NULL};
    char *env[] = {"PROFINJECT_DISABLE=1", NULL};
    struct run_result result;
    run_program(dir, argv, env, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0);
    struct traced_file files[MAX_FILES];
    cr_assert_eq(read_trace_dir(dir, files, MAX_FILES, NULL, NULL), 0);
}
