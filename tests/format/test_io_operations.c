/*
 * Unit: the I/O operations of PI_REC_IO, defined once in trace_format.h.
 * Their numbers are the format's: files written by every earlier recorder
 * carry them, so they are checked against the list as the format first
 * published it. What each operation is (bytes moved, a readiness wait, a
 * receive from a sender, an open) is checked against what its manual page
 * says it does, for every number below PI_IO_OP_COUNT: an operation added
 * without its name or its row fails here.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "profinject/trace_format.h"
#include "reader/trace_reader.h"

/* name, bytes moved in arg1, waits for readiness, receives a sender's bytes, opens */
static const struct {
    const char *name;
    int bytes, ready, receives, opens;
} manual[] = {
    {NULL, 0, 0, 0, 0},
    {"open", 0, 0, 0, 1},     {"close", 0, 0, 0, 0},    {"read", 1, 0, 1, 0},
    {"pread", 1, 0, 0, 0},    {"readv", 1, 0, 1, 0},    {"preadv", 1, 0, 0, 0},
    {"write", 1, 0, 0, 0},    {"pwrite", 1, 0, 0, 0},   {"writev", 1, 0, 0, 0},
    {"pwritev", 1, 0, 0, 0},  {"recv", 1, 0, 1, 0},     {"recvfrom", 1, 0, 1, 0},
    {"recvmsg", 1, 0, 1, 0},  {"send", 1, 0, 0, 0},     {"sendto", 1, 0, 0, 0},
    {"sendmsg", 1, 0, 0, 0},  {"poll", 0, 1, 0, 0},     {"ppoll", 0, 1, 0, 0},
    {"select", 0, 1, 0, 0},   {"pselect", 0, 1, 0, 0},  {"epoll_wait", 0, 1, 0, 0},
    {"mmap", 0, 0, 0, 0},     {"fopen", 0, 0, 0, 1},    {"fclose", 0, 0, 0, 0},
    {"fread", 1, 0, 0, 0},    {"fwrite", 1, 0, 0, 0},   {"preadv2", 1, 0, 0, 0},
    {"pwritev2", 1, 0, 0, 0}, {"recvmmsg", 1, 0, 1, 0}, {"sendmmsg", 1, 0, 0, 0},
    {"copy_file_range", 1, 0, 0, 0}, {"sendfile", 1, 0, 0, 0},
};

Test(io_operations, numbered_as_the_format_published_them)
{
    cr_assert_eq(PI_IO_OPEN, 1);
    cr_assert_eq(PI_IO_EPOLL_WAIT, 21);
    cr_assert_eq(PI_IO_PREADV2, 27, "the first operation of format 3");
    cr_assert_eq(PI_IO_SENDFILE, 32);
    cr_assert_geq(PI_IO_OP_COUNT, sizeof(manual) / sizeof(manual[0]),
                  "operations are appended, never taken out");
    for (unsigned op = 1; op < sizeof(manual) / sizeof(manual[0]); op++)
        cr_expect_str_eq(pi_io_op_name(op), manual[op].name, "operation %u", op);
}

Test(io_operations, every_operation_named_once)
{
    for (unsigned op = 1; op < PI_IO_OP_COUNT; op++) {
        cr_assert_str_neq(pi_io_op_name(op), "unknown", "operation %u has no name", op);
        for (unsigned other = 1; other < op; other++)
            cr_assert_str_neq(pi_io_op_name(op), pi_io_op_name(other), "%u and %u", op, other);
    }
    cr_assert_str_eq(pi_io_op_name(0), "unknown");
    cr_assert_str_eq(pi_io_op_name(PI_IO_OP_COUNT), "unknown");
}

Test(io_operations, what_each_does_as_its_manual_page_says)
{
    cr_assert_eq(PI_IO_OP_COUNT, sizeof(manual) / sizeof(manual[0]),
                 "a new operation needs its line in this test's manual table");
    for (unsigned op = 1; op < PI_IO_OP_COUNT; op++) {
        const char *name = manual[op].name;
        cr_expect_eq(pi_io_moves_bytes(op), manual[op].bytes, "%s: bytes", name);
        cr_expect_eq(pi_io_waits_ready(op), manual[op].ready, "%s: readiness", name);
        cr_expect_eq(pi_io_opens(op), manual[op].opens, "%s: opens", name);
        int waits = manual[op].ready || manual[op].receives;
        cr_expect_eq(pi_io_is_data_wait(op, PI_FD_PIPE), waits, "%s on a pipe", name);
        cr_expect_eq(pi_io_is_data_wait(op, PI_FD_SOCKET), waits, "%s on a socket", name);
        cr_expect_eq(pi_io_is_data_wait(op, PI_FD_FILE), 0, "%s on a file waits for no sender", name);
        cr_expect_eq(pi_io_is_pipe_receipt(op, PI_FD_PIPE), manual[op].receives, "%s", name);
        cr_expect_eq(pi_io_is_pipe_receipt(op, PI_FD_SOCKET), 0, "%s", name);
    }
    cr_assert_eq(pi_io_traits(PI_IO_OP_COUNT), 0);
}
