/*
 * Integration: stress and injected faults. Whatever happens to the
 * profiler, the program runs on with its own output and status, and every
 * event is either in the trace or counted as lost.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define MAX_FILES 256
#define MAX_TIDS 128

struct per_tid {
    uint32_t tid[MAX_TIDS];
    uint64_t io[MAX_TIDS], marks[MAX_TIDS], lost[MAX_TIDS];
};

static int slot(struct per_tid *t, uint32_t tid)
{
    for (int i = 0; i < MAX_TIDS; i++)
        if (t->tid[i] == tid || t->tid[i] == 0) {
            t->tid[i] = tid;
            return i;
        }
    return MAX_TIDS - 1;
}

static void count_by_tid(const struct pi_reader *reader, const struct pi_event *ev,
                         struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    struct per_tid *t = context;
    const struct pi_record *r = &ev->rec;
    if (r->kind == PI_REC_LOST && r->tid)
        t->lost[slot(t, r->tid)] += r->arg[0];
    else if (r->kind == PI_REC_IO)
        t->io[slot(t, r->tid)]++;
    else if (r->kind == PI_REC_MARK)
        t->marks[slot(t, r->tid)]++;
}

Test(reliability, sixty_four_threads_every_hook_family_while_forking, .timeout = 300)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_stress"), "64", "2000", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "status %d: %s", result.status, result.err);

    static struct traced_file files[MAX_FILES];
    static struct per_tid counts;
    memset(&counts, 0, sizeof(counts));
    int n = read_trace_dir(dir, files, MAX_FILES, NULL, NULL);
    int parent = -1, children = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_not(files[i].read_error, "%s: %s", files[i].path, files[i].error);
        if (files[i].counts[PI_REC_FORK])
            parent = i;
    }
    cr_assert_geq(parent, 0);
    for (int i = 0; i < n; i++)
        children += i != parent && files[i].ppid == files[parent].pid && files[i].has_end;
    cr_assert_gt(children, 0, "children were forked while the workers ran");
    read_trace_dir(dir, files, MAX_FILES, NULL, NULL);
    /* the parent's file, per thread: every worker's I/O calls and marks */
    struct traced_file only;
    memset(&only, 0, sizeof(only));
    char error[600];
    struct pi_reader *reader = pi_reader_open(files[parent].path, error, sizeof(error));
    cr_assert_not_null(reader, "%s", error);
    struct pi_event ev;
    while (pi_reader_next(reader, &ev) == PI_READ_EVENT)
        count_by_tid(reader, &ev, &only, &counts);
    pi_reader_close(reader);
    int workers = 0;
    uint64_t recorded = 0, lost = 0;
    for (const char *line = result.out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned tid;
        long io, marks;
        if (sscanf(line, "%u %ld %ld", &tid, &io, &marks) != 3)
            continue;
        int s = slot(&counts, tid);
        /* the thread's own start and exit are lost or kept like the rest */
        cr_assert_geq(counts.io[s] + counts.marks[s] + counts.lost[s], (uint64_t)(io + marks),
                      "thread %u: %lu I/O + %lu marks + %lu lost < %ld made", tid,
                      (unsigned long)counts.io[s], (unsigned long)counts.marks[s],
                      (unsigned long)counts.lost[s], io + marks);
        cr_assert_leq(counts.io[s] + counts.marks[s], (uint64_t)(io + marks),
                      "thread %u: more records than calls", tid);
        recorded += counts.io[s] + counts.marks[s];
        lost += counts.lost[s];
        workers++;
    }
    cr_assert_eq(workers, 64);
    cr_log_info("stress: %lu records kept, %lu lost, %d children", (unsigned long)recorded,
                (unsigned long)lost, children);
}

Test(reliability, stalled_writer_never_blocks_the_application, .timeout = 120)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_threads"), "4", "100000", "timed", NULL};
    /* each frame takes 300 ms to "write"; the pool holds far less than the run makes */
    char *env[] = {"LD_PRELOAD=" PI_TESTING_PRELOAD_PATH, "PROFINJECT_TEST_WRITER_STALL_MS=300",
                   "PROFINJECT_POOL_MB=1", "PROFINJECT_POOL_MAX_MB=1", NULL};
    struct run_result result;
    run_program(dir, argv, env, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "%s", result.err);
    long long elapsed = 0;
    cr_assert_eq(sscanf(result.out, "done %lld", &elapsed), 1, "%s", result.out);
    cr_assert_lt(elapsed, 250000000LL, "the threads took %lld ns behind a stalled writer", elapsed);
    static struct traced_file files[MAX_FILES];
    static struct per_tid counts;
    memset(&counts, 0, sizeof(counts));
    cr_assert_eq(read_trace_dir(dir, files, MAX_FILES, count_by_tid, &counts), 1);
    uint64_t marks = 0, lost = 0;
    for (int i = 0; i < MAX_TIDS; i++) {
        marks += counts.marks[i];
        lost += counts.lost[i];
    }
    cr_assert_gt(lost, 0, "a stalled writer means drops");
    /* 400000 marks, plus 4 thread starts and exits that may be dropped too */
    cr_assert(marks + lost >= 400000 && marks + lost <= 400008, "%lu + %lu", (unsigned long)marks,
              (unsigned long)lost);
}

Test(reliability, disk_full_mid_run)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_status"), "9", "500000", NULL};
    char *env[] = {"LD_PRELOAD=" PI_TESTING_PRELOAD_PATH, "PROFINJECT_TEST_FAIL_WRITE_AFTER=20000",
                   "PROFINJECT_FLUSH_MS=5", NULL};
    struct run_result result;
    run_program(dir, argv, env, NULL, 0, &result);
    cr_assert(result.exited && result.status == 9);
    cr_assert_str_eq(result.out, "ok\n");
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: "), 1, "%s", result.err);
    cr_assert(strstr(result.err, "No space left on device"), "%s", result.err);
    struct traced_file files[4];
    cr_assert_eq(read_trace_dir(dir, files, 4, NULL, NULL), 1);
    cr_assert_not(files[0].read_error, "%s", files[0].error);
}

/* The CPU time (clock ticks) of @pid's thread named @name by its /proc comm; -1: none. */
static long thread_ticks(int pid, const char *name)
{
    for (int tid = pid; tid < pid + 64; tid++) {
        char path[96], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int found = fgets(comm, sizeof(comm), f) && strncmp(comm, name, strlen(name)) == 0;
        fclose(f);
        if (!found)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
        f = fopen(path, "r");
        long utime = -1, stime = -1;
        char line[1024];
        if (f && fgets(line, sizeof(line), f)) {
            const char *after = strrchr(line, ')'); /* fields 14 and 15 follow the name */
            if (after)
                sscanf(after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime,
                       &stime);
        }
        if (f)
            fclose(f);
        return utime < 0 ? -1 : utime + stime;
    }
    return -1;
}

/* The writer's CPU ticks in the second after it stopped: it must sleep, not spin. */
static long writer_ticks_after_stop;

static void remove_directory_then_terminate(int pid, void *context)
{
    char command[200];
    snprintf(command, sizeof(command), "rm -rf '%s'", (const char *)context);
    usleep(100000);
    cr_assert_eq(system(command), 0);
    usleep(1300000); /* the writer looks once a second */
    long before = thread_ticks(pid, "pi-writer");
    usleep(1000000);
    long after = thread_ticks(pid, "pi-writer");
    writer_ticks_after_stop = before < 0 || after < 0 ? -1 : after - before;
    kill(pid, SIGTERM);
}

Test(reliability, output_directory_removed_mid_run, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_loop"), NULL};
    char *env[] = {"PROFINJECT_FLUSH_MS=10", NULL};
    struct run_result result;
    run_program_during(dir, argv, env, remove_directory_then_terminate, dir, &result);
    cr_assert(!result.exited && result.status == SIGTERM, "ended by signal %d", result.status);
    /* the loss is said, once: writes into the removed file would go nowhere */
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: "), 1, "%s", result.err);
    cr_assert(strstr(result.err, "was removed while recording"), "%s", result.err);
    struct stat st;
    cr_assert_neq(stat(dir, &st), 0, "nothing recreated the removed directory");
    /* a writer that stopped writing sleeps between its flushes: with no sample to take, it
     * once waited for the sample it would never take again and spun, a CPU for the rest of
     * the job (sysconf(_SC_CLK_TCK) ticks a second: 100 here) */
    cr_assert_geq(writer_ticks_after_stop, 0, "the writer thread was found");
    cr_assert_leq(writer_ticks_after_stop, sysconf(_SC_CLK_TCK) / 20,
                  "the stopped writer used %ld ticks of CPU in a second",
                  writer_ticks_after_stop);
}

Test(reliability, exit_from_a_signal_handler)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_signal_exit"), NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 3, "status %d", result.status);
    struct traced_file files[4];
    cr_assert_eq(read_trace_dir(dir, files, 4, NULL, NULL), 1);
    cr_assert_eq(files[0].counts[PI_REC_MARK], 50);
    cr_assert(files[0].has_end && files[0].end_status == 3);
}

Test(reliability, statically_linked_child)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_run_child"), (char *)test_program("prog_static_child"),
                    "6", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "status %d: %s", result.status, result.err);
    cr_assert_str_eq(result.out, "static ok\n");
    cr_assert_str_eq(result.err, "");
}

Test(reliability, setuid_child)
{
    /* a copy of prog_status that runs as nobody: the loader ignores the
     * preload for it (secure mode), and it must simply work */
    char dir[64], bin[64];
    make_temp_dir(dir, sizeof(dir));
    make_temp_dir(bin, sizeof(bin));
    char copy[128], command[512];
    snprintf(copy, sizeof(copy), "%s/setuid_status", bin);
    snprintf(command, sizeof(command), "cp '%s' '%s' && chmod 755 '%s' && chown nobody '%s' && chmod u+s '%s'",
             test_program("prog_status"), copy, bin, copy, copy);
    if (system(command) != 0)
        cr_skip_test("cannot make a setuid copy here (not root?)");
    char *argv[] = {(char *)test_program("prog_run_child"), copy, "0", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "status %d: %s", result.status, result.err);
    cr_assert_str_eq(result.out, "ok\n");
}

Test(reliability, planted_symlink_is_not_followed)
{
    char shared[64], target[64], link[128];
    make_temp_dir(shared, sizeof(shared));
    make_temp_dir(target, sizeof(target));
    snprintf(link, sizeof(link), "%s/traces", shared);
    cr_assert_eq(symlink(target, link), 0);
    char *argv[] = {(char *)test_program("prog_status"), "0", "1000", NULL};
    struct run_result result;
    run_program(link, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0);
    cr_assert_str_eq(result.out, "ok\n");
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: "), 1, "%s", result.err);
    cr_assert(strstr(result.err, "symbolic link"), "%s", result.err);
    struct traced_file files[4];
    cr_assert_eq(read_trace_dir(target, files, 4, NULL, NULL), 0, "nothing written through the link");
}

/* The installed library has no fault injection: a PROFINJECT_TEST_* setting
 * is told as ignored, and the job runs and is traced as without it. */
Test(reliability, release_library_ignores_test_settings, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_threads"), "2", "1000", NULL};
    char *env[] = {"PROFINJECT_TEST_WRITER_STALL_MS=3000", NULL};
    struct timespec begin, end;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    struct run_result result;
    run_program(dir, argv, env, NULL, 0, &result);
    clock_gettime(CLOCK_MONOTONIC, &end);
    cr_assert(result.exited && result.status == 0, "%s", result.err);
    double seconds = (double)(end.tv_sec - begin.tv_sec) + (end.tv_nsec - begin.tv_nsec) / 1e9;
    cr_assert_lt(seconds, 2.0, "a stall of 3 s a frame was honoured: %.1f s", seconds);
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: "), 1, "%s", result.err);
    cr_assert(strstr(result.err, "PROFINJECT_TEST_WRITER_STALL_MS") &&
                  strstr(result.err, "ignores it"), "%s", result.err);
    static struct traced_file files[4];
    cr_assert_eq(read_trace_dir(dir, files, 4, NULL, NULL), 1);
    cr_assert(files[0].has_end, "the trace is whole");
    cr_assert_eq(files[0].counts[PI_REC_MARK], 2000);
    cr_assert_eq(files[0].lost, 0);
}

/* A writer that cannot finish as the process ends (each frame takes 3 s to
 * write; the process waits 5 s) loses what it had not written: that is said
 * on stderr with the count, and the trace ends with the loss. */
Test(reliability, unfinished_writer_says_what_it_lost, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_threads"), "2", "1000", NULL};
    char *env[] = {"LD_PRELOAD=" PI_TESTING_PRELOAD_PATH, "PROFINJECT_TEST_WRITER_STALL_MS=3000",
                   NULL};
    struct run_result result;
    run_program(dir, argv, env, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "%s", result.err);
    cr_assert_str_eq(result.out, "done\n");
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: "), 1, "%s", result.err);
    unsigned long long said = 0;
    const char *about = strstr(result.err, "about ");
    cr_assert(about && sscanf(about, "about %llu records", &said) == 1, "%s", result.err);
    static struct traced_file files[4];
    cr_assert_eq(read_trace_dir(dir, files, 4, NULL, NULL), 1);
    cr_assert_not(files[0].read_error, "%s", files[0].error);
    /* the program's 2000 marks were never written: the trace counts them lost, as said */
    cr_assert_eq(files[0].counts[PI_REC_MARK], 0);
    cr_assert_geq(files[0].lost, 2000, "%s", result.err);
    cr_assert_eq(files[0].lost, said, "%s", result.err);
}

struct thread_end {
    uint32_t tid;
    int ends;
    uint64_t cpu_ns;
};

static void find_thread_end(const struct pi_reader *reader, const struct pi_event *ev,
                            struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    struct thread_end *end = context;
    if (ev->rec.kind == PI_REC_THREAD_EXIT && ev->rec.tid == end->tid) {
        end->ends++;
        end->cpu_ns = ev->rec.arg[0];
    }
}

/* A thread that ends while the process ends, after the writer stopped recording (held
 * there 300 ms by the tests' knob, as a loaded machine holds it) keeps its end record and
 * its CPU time: it was lost, and the report took its whole life for CPU time. */
Test(reliability, a_thread_ending_with_the_process_keeps_its_cpu_time, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_thread_ends_late"), "100", NULL};
    char *env[] = {"LD_PRELOAD=" PI_TESTING_PRELOAD_PATH, "PROFINJECT_TEST_STOP_STALL_MS=300",
                   NULL};
    struct run_result result;
    run_program(dir, argv, env, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "%s", result.err);
    unsigned tid = 0;
    long long cpu = 0;
    cr_assert_eq(sscanf(result.out, "%u %lld", &tid, &cpu), 2, "the thread ended: %s", result.out);
    struct thread_end end = {tid, 0, 0};
    static struct traced_file files[4];
    cr_assert_eq(read_trace_dir(dir, files, 4, find_thread_end, &end), 1);
    cr_assert_eq(end.ends, 1, "one end record of thread %u", tid);
    /* its clock in the trace, read as it ended, against its own read just before */
    cr_assert(end.cpu_ns >= (uint64_t)cpu && end.cpu_ns <= (uint64_t)cpu + 20000000u,
              "%llu ns in the trace, %lld by the thread", (unsigned long long)end.cpu_ns, cpu);
}

/* PROFINJECT_OUTPUT naming a regular file: the message says so (it used to
 * call it a symbolic link). */
Test(reliability, output_that_is_a_file_is_called_a_file)
{
    char dir[64], file[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(file, sizeof(file), "%s/traces", dir);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    char *argv[] = {(char *)test_program("prog_status"), "0", "1000", NULL};
    struct run_result result;
    run_program(file, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0);
    cr_assert_str_eq(result.out, "ok\n");
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: "), 1, "%s", result.err);
    cr_assert(strstr(result.err, "it is a regular file, not a directory"), "%s", result.err);
    cr_assert_null(strstr(result.err, "symbolic link"), "%s", result.err);
}

static void become_nobody(void)
{
    if (setgid(65534) != 0 || setuid(65534) != 0)
        _exit(126);
}

/* Run prog_status as uid 65534 with an output directory it cannot write, so
 * that the traces would go to $TMPDIR/profinject-traces-65534. */
static void run_as_nobody(const char *unwritable, struct run_result *result)
{
    char *argv[] = {(char *)test_program("prog_status"), "0", "1000", NULL};
    run_program(unwritable, argv, NULL, become_nobody, 0, result);
    cr_assert(result->exited && result->status == 0, "status %d: %s", result->status,
              result->err);
    cr_assert_str_eq(result->out, "ok\n");
    cr_assert_eq(count_lines_with_prefix(result->err, "profinject: "), 1, "%s", result->err);
}

/* The fallback directory in a shared /tmp is used only when it is this
 * user's private directory, as the control directory: one that another user
 * made (open to all), or this user's left open to all, is refused, said,
 * and nothing is written into it. */
Test(reliability, fallback_directory_not_private_is_refused, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("needs root, to run the program as another user");
    char tmp[64], out[128], fallback[160];
    make_temp_dir(tmp, sizeof(tmp));
    cr_assert_eq(chmod(tmp, 0755), 0);
    snprintf(out, sizeof(out), "%s/root-only", tmp);
    cr_assert_eq(mkdir(out, 0755), 0); /* root's: uid 65534 cannot write in it */
    snprintf(fallback, sizeof(fallback), "%s/profinject-traces-65534", tmp);
    cr_assert_eq(mkdir(fallback, 0777), 0);
    cr_assert_eq(chmod(fallback, 0777), 0); /* root's, open to all */
    setenv("TMPDIR", tmp, 1);
    static struct traced_file files[4];
    struct run_result result;

    run_as_nobody(out, &result);
    cr_assert(strstr(result.err, "not a private directory"), "%s", result.err);
    cr_assert_eq(read_trace_dir(fallback, files, 4, NULL, NULL), 0, "written into root's");

    cr_assert_eq(chown(fallback, 65534, 65534), 0); /* the user's own, but open to all */
    run_as_nobody(out, &result);
    cr_assert(strstr(result.err, "not a private directory"), "%s", result.err);
    cr_assert_eq(read_trace_dir(fallback, files, 4, NULL, NULL), 0, "written into an open one");

    cr_assert_eq(chmod(fallback, 0700), 0); /* private: used, and said */
    run_as_nobody(out, &result);
    cr_assert(strstr(result.err, "they go to"), "%s", result.err);
    cr_assert_eq(read_trace_dir(fallback, files, 4, NULL, NULL), 1, "%s", result.err);
}
