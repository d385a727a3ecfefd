/*
 * Integration: programs run under LD_PRELOAD, checked through the reader.
 * Threads, fork from a multithreaded process, fork + exec, SIGKILL, and
 * hooks firing from a library constructor.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#define MAX_FILES 64

/* ---- 16 threads x 100k events: every one recorded or counted as lost ---- */

#define MAX_TIDS 64

struct thread_marks {
    uint32_t tids[MAX_TIDS];
    uint64_t records[MAX_TIDS]; /* every record a thread made: start, marks, exit */
    uint64_t lost[MAX_TIDS];    /* what the LOST records say it dropped */
    uint64_t marks[MAX_TIDS];
    uint64_t next_expected[17];
    uint64_t out_of_order, foreign, unattributed_lost;
};

static int tid_slot(struct thread_marks *m, uint32_t tid)
{
    for (int i = 0; i < MAX_TIDS; i++) {
        if (m->tids[i] == tid)
            return i;
        if (m->tids[i] == 0) {
            m->tids[i] = tid;
            return i;
        }
    }
    cr_assert_fail("more than %d threads", MAX_TIDS);
    return -1;
}

static void count_thread_marks(const struct pi_reader *reader, const struct pi_event *ev,
                               struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    struct thread_marks *m = context;
    const struct pi_record *r = &ev->rec;
    if (r->kind == PI_REC_LOST) {
        if (r->tid == 0)
            m->unattributed_lost += r->arg[0];
        else
            m->lost[tid_slot(m, r->tid)] += r->arg[0];
        return;
    }
    if (r->tid == 0)
        return; /* the writer's own records: samples, clock sync, strings */
    int slot = tid_slot(m, r->tid);
    m->records[slot]++;
    if (r->kind != PI_REC_MARK)
        return;
    m->marks[slot]++;
    uint64_t thread = r->arg[0] >> 32, seq = r->arg[0] & 0xffffffffu;
    if (thread < 1 || thread > 16) {
        m->foreign++;
        return;
    }
    /* dropped records leave gaps, but never reorder or repeat */
    if (seq < m->next_expected[thread])
        m->out_of_order++;
    m->next_expected[thread] = seq + 1;
}

Test(process_tree, sixteen_threads_every_event_accounted_for, .timeout = 120)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_threads"), "16", "100000", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "program failed: %s", result.err);
    cr_assert_str_eq(result.out, "done\n");

    struct traced_file files[MAX_FILES];
    static struct thread_marks m;
    memset(&m, 0, sizeof(m));
    int n = read_trace_dir(dir, files, MAX_FILES, count_thread_marks, &m);
    cr_assert_eq(n, 1);
    cr_assert_not(files[0].read_error, "%s", files[0].error);
    cr_assert_eq(m.foreign, 0);
    cr_assert_eq(m.out_of_order, 0, "a thread's records came back out of order");
    cr_assert_eq(m.unattributed_lost, 0, "every loss is attributed to its thread");
    int workers = 0;
    uint64_t recorded = 0, lost = 0;
    for (int i = 0; i < MAX_TIDS && m.tids[i]; i++) {
        if (m.marks[i] == 0 && m.lost[i] == 0)
            continue; /* the main thread */
        workers++;
        /* a thread start, 100000 marks, a thread exit */
        cr_assert_eq(m.records[i] + m.lost[i], 100002,
                     "thread %u: recorded %lu + lost %lu != 100002 made", m.tids[i],
                     (unsigned long)m.records[i], (unsigned long)m.lost[i]);
        recorded += m.marks[i];
        lost += m.lost[i];
    }
    cr_assert_eq(workers, 16);
    cr_assert(files[0].has_end, "no end-of-process record");
    cr_log_info("16x100k: recorded %lu marks, lost %lu records", (unsigned long)recorded,
                (unsigned long)lost);
}

/* ---- fork while other threads record ---- */

struct fork_marks {
    struct traced_file *files; /* per-file counters are indexed by position in this array */
    uint64_t child_marks[MAX_FILES];   /* per file: marks valued as a child's */
    uint64_t thread_marks[MAX_FILES];  /* per file: marks valued as the parent's threads' */
    int child_index[MAX_FILES];
    int file_index;
};

static void count_fork_marks(const struct pi_reader *reader, const struct pi_event *ev,
                             struct traced_file *file, void *context)
{
    (void)reader;
    struct fork_marks *m = context;
    if (ev->rec.kind != PI_REC_MARK)
        return;
    uint64_t who = ev->rec.arg[0] >> 32;
    long slot = file - m->files;
    if (who >= 100) {
        m->child_marks[slot]++;
        m->child_index[slot] = (int)(who - 100);
    } else {
        m->thread_marks[slot]++;
    }
}

Test(process_tree, fork_from_multithreaded_process, .timeout = 60)
{
    char dir[64];
    char *argv[] = {(char *)test_program("prog_fork"), "5", NULL};
    struct run_result result;
    run_in_new_dir(dir, sizeof(dir), argv, &result);
    cr_assert(result.exited && result.status == 0, "children failed: status %d, %s",
              result.status, result.err);

    struct traced_file files[MAX_FILES];
    static struct fork_marks marks;
    memset(&marks, 0, sizeof(marks));
    marks.files = files;
    int n = read_trace_dir(dir, files, MAX_FILES, count_fork_marks, &marks);
    cr_assert_eq(n, 6, "expected the parent's and 5 children's files, found %d", n);
    int parent = -1;
    for (int i = 0; i < n; i++) {
        cr_assert_not(files[i].read_error, "%s", files[i].error);
        if (files[i].counts[PI_REC_FORK] > 0)
            parent = i;
    }
    cr_assert(parent >= 0, "no file recorded the forks");
    cr_assert_eq(files[parent].counts[PI_REC_FORK], 5);
    cr_assert_eq(marks.child_marks[parent], 0,
                 "child records leaked into the parent's file");
    cr_assert_gt(marks.thread_marks[parent], 0);
    int seen[5] = {0};
    for (int i = 0; i < n; i++) {
        if (i == parent)
            continue;
        int slot = i;
        cr_assert_eq(files[i].ppid, files[parent].pid, "child's parent pid is not the parent");
        cr_assert_eq(marks.thread_marks[slot], 0, "parent thread records leaked into a child");
        cr_assert_eq(marks.child_marks[slot] + files[i].lost, 1000);
        cr_assert(files[i].has_end && files[i].end_reason == PI_END__EXIT);
        cr_assert_eq(files[i].end_status, marks.child_index[slot]);
        seen[marks.child_index[slot]]++;
    }
    for (int c = 0; c < 5; c++)
        cr_assert_eq(seen[c], 1, "child %d has %d files", c, seen[c]);
}

/* ---- a fork child defines the names it inherited ---- */

struct inherited_names {
    struct traced_file *files; /* per-file counters are indexed by position in this array */
    uint64_t marks[MAX_FILES], named_right[MAX_FILES];
};

static void count_inherited_names(const struct pi_reader *reader, const struct pi_event *ev,
                                  struct traced_file *file, void *context)
{
    struct inherited_names *m = context;
    if (ev->rec.kind != PI_REC_MARK)
        return;
    long slot = file - m->files;
    m->marks[slot]++;
    const char *name = pi_reader_string(reader, ev->rec.arg[1]);
    char expected[64];
    snprintf(expected, sizeof(expected), "name-%05d-long-enough-to-fill-definition-frames",
             (int)ev->rec.arg[0]);
    m->named_right[slot] += name && strcmp(name, expected) == 0;
}

/* The parent's and the child's files of prog_fork_names in @dir, read: the child's index. */
static int read_fork_names(const char *dir, struct traced_file *files, struct inherited_names *names)
{
    memset(names, 0, sizeof(*names));
    names->files = files;
    int n = read_trace_dir(dir, files, MAX_FILES, count_inherited_names, names);
    cr_assert_eq(n, 2, "the parent's and the child's files: found %d", n);
    int child = files[0].counts[PI_REC_FORK] ? 1 : 0;
    cr_assert_eq(files[1 - child].counts[PI_REC_FORK], 1, "no file recorded the fork");
    return child;
}

/*
 * 3,000 names made before the fork: the parent's file defines them, the
 * child's file only names the parent's, and each of the child's marks
 * reads back under its own name through it; read without the parent's
 * file, the child's marks are still read, their names unresolved and said
 * so. Both when the parent had written its names before the fork and when
 * it had not even made its file yet.
 */
Test(process_tree, fork_child_names_come_from_the_parents_file, .timeout = 60)
{
    const char *const when[] = {"later", "at-once"};
    for (int w = 0; w < 2; w++) {
        char dir[64];
        char *argv[] = {(char *)test_program("prog_fork_names"), "3000", (char *)when[w], NULL};
        struct run_result result;
        run_in_new_dir(dir, sizeof(dir), argv, &result);
        cr_assert(result.exited && result.status == 0, "status %d: %s", result.status, result.err);

        struct traced_file files[MAX_FILES];
        struct inherited_names names;
        int child = read_fork_names(dir, files, &names);
        cr_assert_geq(files[1 - child].counts[PI_REC_STRING], 3000, "%s", when[w]);
        cr_assert_gt(files[child].inherited_below, 3000,
                     "%s: the child's header names its parent's ids", when[w]);
        cr_assert_lt(files[child].counts[PI_REC_STRING], 30,
                     "%s: the child's file defines %lu strings, not its parent's 3,000 again",
                     when[w], (unsigned long)files[child].counts[PI_REC_STRING]);
        cr_assert_not(files[child].inherited_unresolved, "%s: %s", when[w], files[child].error);
        cr_assert_eq(names.marks[child], 300);
        cr_assert_eq(names.named_right[child], 300,
                     "%s: %lu of the child's 300 marks read back by name", when[w],
                     (unsigned long)names.named_right[child]);

        /* the child's file alone: the parent's moved out of the directory */
        char parent_path[600], moved[700];
        snprintf(parent_path, sizeof(parent_path), "%s", files[1 - child].path);
        snprintf(moved, sizeof(moved), "%s/parent-moved-away", dir);
        cr_assert_eq(rename(parent_path, moved), 0);
        struct traced_file alone[MAX_FILES];
        struct inherited_names alone_names = {.files = alone};
        int n = read_trace_dir(dir, alone, MAX_FILES, count_inherited_names, &alone_names);
        cr_assert_eq(n, 1);
        cr_assert_not(alone[0].read_error, "%s", alone[0].error);
        cr_assert(alone[0].inherited_unresolved, "%s: the missing parent is said", when[w]);
        const char *name = strrchr(parent_path, '/') + 1;
        cr_assert(strstr(alone[0].error, name), "the reason names the parent's file: %s",
                  alone[0].error);
        cr_assert_eq(alone_names.marks[0], 300, "its records are read all the same");
        cr_assert_eq(alone_names.named_right[0], 0, "no name is guessed");
        unlink(moved);
        unlink(files[child].path);
        rmdir(dir);
    }
}

/* ---- fork + exec ---- */

struct named_marks {
    uint64_t parent, before_exec, after_exec;
};

static void count_named_marks(const struct pi_reader *reader, const struct pi_event *ev,
                              struct traced_file *file, void *context)
{
    (void)file;
    struct named_marks *m = context;
    if (ev->rec.kind != PI_REC_MARK)
        return;
    const char *name = pi_reader_string(reader, ev->rec.arg[1]);
    cr_assert_not_null(name, "mark names an undefined string %lu", (unsigned long)ev->rec.arg[1]);
    if (strcmp(name, "parent") == 0)
        m->parent++;
    else if (strcmp(name, "child-before-exec") == 0)
        m->before_exec++;
    else if (strcmp(name, "after-exec") == 0)
        m->after_exec++;
}

Test(process_tree, fork_then_exec, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_exec"), NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 5, "status %d: %s", result.status, result.err);

    struct traced_file files[MAX_FILES];
    struct named_marks marks = {0};
    int n = read_trace_dir(dir, files, MAX_FILES, count_named_marks, &marks);
    cr_assert_eq(n, 3, "parent, child before exec, child after exec: found %d files", n);
    cr_assert_eq(marks.parent, 10);
    cr_assert_eq(marks.before_exec, 20);
    cr_assert_eq(marks.after_exec, 30);
    int parent_pid = 0, exec_files = 0, same_pid = 0;
    for (int i = 0; i < n; i++)
        if (files[i].counts[PI_REC_FORK])
            parent_pid = files[i].pid;
    for (int i = 0; i < n; i++) {
        if (files[i].pid == parent_pid)
            continue;
        cr_assert_eq(files[i].ppid, parent_pid);
        exec_files += files[i].counts[PI_REC_EXEC] > 0;
        same_pid = same_pid ? (same_pid == files[i].pid ? -1 : same_pid) : files[i].pid;
    }
    cr_assert_eq(exec_files, 1, "the image before exec ends with an exec record");
    cr_assert_eq(same_pid, -1, "both child files carry the child's pid");
}

/* ---- SIGKILL mid-run: what was written still decodes ---- */

struct loop_marks {
    uint64_t count, gaps, next;
};

static void check_loop_marks(const struct pi_reader *reader, const struct pi_event *ev,
                             struct traced_file *file, void *context)
{
    (void)reader;
    (void)file;
    struct loop_marks *m = context;
    if (ev->rec.kind != PI_REC_MARK)
        return;
    if (ev->rec.arg[0] != m->next)
        m->gaps++;
    m->next = ev->rec.arg[0] + 1;
    m->count++;
}

Test(process_tree, sigkill_leaves_a_readable_file, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_loop"), NULL};
    char *env[] = {"PROFINJECT_FLUSH_MS=10", NULL};
    struct run_result result;
    run_program(dir, argv, env, NULL, 300, &result);
    cr_assert(!result.exited && result.status == 9, "program was not killed");

    struct traced_file files[MAX_FILES];
    struct loop_marks marks = {0};
    int n = read_trace_dir(dir, files, MAX_FILES, check_loop_marks, &marks);
    cr_assert_eq(n, 1);
    cr_assert_not(files[0].read_error, "%s", files[0].error);
    cr_assert_not(files[0].has_end, "a killed process cannot have written its end");
    cr_assert_gt(marks.count, 1000, "only %lu marks survived 300 ms", (unsigned long)marks.count);
    cr_assert_eq(marks.gaps, 0, "marks 0..%lu should all be there", (unsigned long)marks.next);
}

/* ---- hooks firing from another library's constructor ---- */

struct ctor_marks {
    uint64_t ctor, main;
};

static void count_ctor_marks(const struct pi_reader *reader, const struct pi_event *ev,
                             struct traced_file *file, void *context)
{
    (void)file;
    struct ctor_marks *m = context;
    if (ev->rec.kind != PI_REC_MARK)
        return;
    const char *name = pi_reader_string(reader, ev->rec.arg[1]);
    if (name && strcmp(name, "ctor") == 0)
        m->ctor++;
    if (name && strcmp(name, "main") == 0)
        m->main++;
}

Test(process_tree, events_from_a_library_constructor, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_ctor"), NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "%s", result.err);
    struct traced_file files[MAX_FILES];
    struct ctor_marks marks = {0};
    int n = read_trace_dir(dir, files, MAX_FILES, count_ctor_marks, &marks);
    cr_assert_eq(n, 1);
    cr_assert_eq(marks.ctor, 25, "constructor marks: %lu of 25", (unsigned long)marks.ctor);
    cr_assert_eq(marks.main, 1);
}

/* ---- posix_spawn and system: the children's images start their own files ---- */

Test(process_tree, posix_spawn_and_system_children, .timeout = 60)
{
    char dir[64];
    make_temp_dir(dir, sizeof(dir));
    char *argv[] = {(char *)test_program("prog_spawn"), NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "status %d: %s", result.status, result.err);
    struct traced_file files[MAX_FILES];
    int n = read_trace_dir(dir, files, MAX_FILES, NULL, NULL);
    /* prog_spawn and prog_status; the shell of system("true") (true is its builtin)
     * recorded nothing and ended at once: no file */
    cr_assert_eq(n, 2, "files: %d", n);
    int parent = -1, spawned = 0;
    for (int i = 0; i < n; i++)
        if (files[i].has_end && files[i].end_reason == PI_END_EXIT && files[i].end_status == 4)
            spawned = i + 1;
    cr_assert(spawned, "the posix_spawn'ed program has its own file ending with its status 4");
    for (int i = 0; i < n; i++)
        if (files[i].pid == files[spawned - 1].ppid)
            parent = i;
    cr_assert_geq(parent, 0, "its parent pid is prog_spawn's");
}

/* ---- a process that records nothing: a file only once it lived past its first flush ---- */

Test(process_tree, a_file_for_what_recorded_or_lived, .timeout = 60)
{
    char dir[64];
    struct run_result result;
    struct traced_file files[MAX_FILES];
    /* ends at once having recorded nothing: no file at all */
    char *at_once[] = {"/bin/true", NULL};
    run_in_new_dir(dir, sizeof(dir), at_once, &result);
    cr_assert(result.exited && result.status == 0, "status %d: %s", result.status, result.err);
    cr_assert_eq(read_trace_dir(dir, files, MAX_FILES, NULL, NULL), 0, "/bin/true leaves no file");
    /* records nothing, but lives past the first flush (100 ms): its samples and end are kept */
    char *lives[] = {"/bin/sleep", "0.3", NULL};
    run_in_new_dir(dir, sizeof(dir), lives, &result);
    cr_assert(result.exited && result.status == 0, "status %d: %s", result.status, result.err);
    cr_assert_eq(read_trace_dir(dir, files, MAX_FILES, NULL, NULL), 1, "sleep 0.3 has its file");
    cr_assert(files[0].has_end && files[0].end_reason == PI_END_EXIT && !files[0].truncated);
    cr_assert_geq(files[0].counts[PI_REC_PROC_SAMPLE], 2, "its RSS, sampled and at the end");
}
