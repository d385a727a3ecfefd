/*
 * Integration: the I/O hooks against prog_io, whose every call, size and
 * descriptor kind is known.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

struct io_tally {
    char path[256];
    uint64_t count[PI_IO_OP_COUNT][PI_FD_CLASS_COUNT];
    uint64_t bytes[PI_IO_OP_COUNT][PI_FD_CLASS_COUNT];
    uint64_t file_ops_with_path, file_ops;
};

static void tally_io(const struct pi_reader *reader, const struct pi_event *ev,
                     struct traced_file *file, void *context)
{
    (void)file;
    struct io_tally *t = context;
    const struct pi_record *r = &ev->rec;
    if (r->kind != PI_REC_IO)
        return;
    unsigned op = PI_IO_OP(r->flags), fd_class = PI_IO_CLASS(r->flags);
    cr_assert_lt(op, PI_IO_OP_COUNT);
    const char *path = r->arg[2] ? pi_reader_string(reader, r->arg[2]) : NULL;
    if (op != PI_IO_OPEN && op != PI_IO_FOPEN && fd_class == PI_FD_FILE) {
        t->file_ops++;
        if (path && strcmp(path, t->path) == 0)
            t->file_ops_with_path++;
    }
    if (op == PI_IO_OPEN && path && strcmp(path, t->path) != 0)
        return; /* the loader's and libc's own opens */
    t->count[op][fd_class]++;
    if (!(r->flags & PI_FLAG_FAILED))
        t->bytes[op][fd_class] += r->arg[1];
}

/* Run @program on a folder of its own under the preload; its I/O tallied, the
 * file @file of that folder the one whose path the records must carry. */
static void run_io_program(const char *program, const char *file, struct io_tally *t)
{
    char dir[64], work[64];
    make_temp_dir(dir, sizeof(dir));
    make_temp_dir(work, sizeof(work));
    char *argv[] = {(char *)test_program(program), work, NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "%s failed with %d", program, result.status);
    struct traced_file files[4];
    memset(t, 0, sizeof(*t));
    snprintf(t->path, sizeof(t->path), "%s/%s", work, file);
    cr_assert_eq(read_trace_dir(dir, files, 4, tally_io, t), 1);
}

Test(io_hooks, known_workload_comes_back_exactly, .timeout = 60)
{
    static struct io_tally t;
    run_io_program("prog_io", "data.bin", &t);

    cr_assert_eq(t.count[PI_IO_OPEN][PI_FD_FILE], 3, "creat and two opens of the file, as a file");
    cr_assert_eq(t.count[PI_IO_OPEN][PI_FD_UNKNOWN], 0);
    cr_assert_eq(t.count[PI_IO_WRITE][PI_FD_FILE], 3);
    cr_assert_eq(t.bytes[PI_IO_WRITE][PI_FD_FILE], 3 * 4096);
    cr_assert_eq(t.count[PI_IO_READ][PI_FD_FILE], 4);
    cr_assert_eq(t.bytes[PI_IO_READ][PI_FD_FILE], 12288);
    cr_assert_eq(t.count[PI_IO_PREAD][PI_FD_FILE], 1);
    cr_assert_eq(t.bytes[PI_IO_PREAD][PI_FD_FILE], 100);
    cr_assert_eq(t.bytes[PI_IO_READV][PI_FD_FILE], 100);
    cr_assert_eq(t.count[PI_IO_CLOSE][PI_FD_FILE], 3);
    cr_assert_eq(t.count[PI_IO_FOPEN][PI_FD_UNKNOWN] + t.count[PI_IO_FOPEN][PI_FD_FILE], 1);
    cr_assert_eq(t.bytes[PI_IO_FREAD][PI_FD_FILE], 12288, "stdio reads are seen");
    cr_assert_eq(t.count[PI_IO_FCLOSE][PI_FD_FILE], 1);
    cr_assert_eq(t.count[PI_IO_MMAP][PI_FD_FILE], 1);
    cr_assert_eq(t.bytes[PI_IO_MMAP][PI_FD_FILE], 12288);
    cr_assert_eq(t.file_ops_with_path, t.file_ops, "every file operation carries the path");

    cr_assert_eq(t.bytes[PI_IO_WRITE][PI_FD_PIPE], 10);
    cr_assert_eq(t.count[PI_IO_POLL][PI_FD_PIPE], 1);
    cr_assert_eq(t.bytes[PI_IO_POLL][PI_FD_PIPE], 1, "one descriptor ready");
    cr_assert_eq(t.bytes[PI_IO_READ][PI_FD_PIPE], 10);
    cr_assert_eq(t.bytes[PI_IO_SEND][PI_FD_SOCKET], 20);
    cr_assert_eq(t.bytes[PI_IO_RECV][PI_FD_SOCKET], 20);
    cr_assert_eq(t.bytes[PI_IO_WRITE][PI_FD_TTY] + t.bytes[PI_IO_WRITE][PI_FD_FILE], 3 * 4096,
                 "stdout goes through stdio, not the write hook");
}

Test(io_hooks, batched_and_in_kernel_io_comes_back_exactly, .timeout = 60)
{
    static struct io_tally t;
    run_io_program("prog_io_vector", "a.bin", &t);

    /* the sizes prog_io_vector.c fixes */
    cr_assert_eq(t.count[PI_IO_PWRITEV2][PI_FD_FILE], 1);
    cr_assert_eq(t.bytes[PI_IO_PWRITEV2][PI_FD_FILE], 8192);
    cr_assert_eq(t.bytes[PI_IO_PREADV2][PI_FD_FILE], 150);
    cr_assert_eq(t.count[PI_IO_COPY_FILE_RANGE][PI_FD_FILE], 1, "on the file read from");
    cr_assert_eq(t.bytes[PI_IO_COPY_FILE_RANGE][PI_FD_FILE], 5000);
    cr_assert_eq(t.count[PI_IO_SENDFILE][PI_FD_FILE], 1, "on the file read from");
    cr_assert_eq(t.bytes[PI_IO_SENDFILE][PI_FD_FILE], 3000);
    cr_assert_eq(t.count[PI_IO_SENDMMSG][PI_FD_SOCKET], 1);
    cr_assert_eq(t.bytes[PI_IO_SENDMMSG][PI_FD_SOCKET], 7 + 9 + 11);
    cr_assert_eq(t.count[PI_IO_RECVMMSG][PI_FD_SOCKET], 1);
    cr_assert_eq(t.bytes[PI_IO_RECVMMSG][PI_FD_SOCKET], 7 + 9 + 11, "every message's bytes");
    /* pwritev2, preadv2, copy_file_range, sendfile and close of a.bin carry its path */
    cr_assert_eq(t.file_ops_with_path, 5);
}

/* Every live thread holds a trace buffer: 500 of them at once, more than the
 * pool starts with (256 buffers of 64 KB), each opening a file 200 times. The
 * pool grows with the threads: every open is in the trace, none lost. */
Test(io_hooks, five_hundred_live_threads_lose_no_open, .timeout = 120)
{
    char dir[64], work[64];
    make_temp_dir(dir, sizeof(dir));
    make_temp_dir(work, sizeof(work));
    char *argv[] = {(char *)test_program("prog_many_threads"), work, "500", "200", NULL};
    struct run_result result;
    run_program(dir, argv, NULL, NULL, 0, &result);
    cr_assert(result.exited && result.status == 0, "status %d: %s", result.status, result.err);
    long opened = 0, rss_kb = 0;
    cr_assert_eq(sscanf(result.out, "opened %ld rss_kb %ld", &opened, &rss_kb), 2, "%s",
                 result.out);
    cr_assert_eq(opened, 500 * 200 + 1, "the program's own count, with the open that creates");
    static struct io_tally t;
    static struct traced_file files[4];
    memset(&t, 0, sizeof(t));
    snprintf(t.path, sizeof(t.path), "%s/data.bin", work);
    cr_assert_eq(read_trace_dir(dir, files, 4, tally_io, &t), 1);
    cr_assert_eq(files[0].lost, 0, "records lost: %s", result.err);
    cr_assert_eq(t.count[PI_IO_OPEN][PI_FD_FILE], (uint64_t)opened, "%s", result.err);
    cr_assert_eq(count_lines_with_prefix(result.err, "profinject: "), 0, "%s", result.err);
    cr_log_info("500 threads x 200 opens: %ld KB resident with every thread alive", rss_kb);
}
