/*
 * io_vector_hooks.c - the I/O calls that move many buffers or messages at
 * once, or copy between descriptors inside the kernel: preadv2/pwritev2,
 * recvmmsg/sendmmsg, copy_file_range and sendfile. Data loaders reach for
 * them (batched UDP receives, zero-copy file serving); each becomes one
 * PI_REC_IO record like its siblings in io_hooks.c, with the bytes moved.
 */
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/hook.h"
#include "io_record.h"

#define PI_VECTOR_HOOK(name, op)                                                              \
    PI_EXPORT ssize_t name(int fd, const struct iovec *v, int n, off_t at, int flags)             \
    {                                                                                             \
        if (!pi_hook_active())                                                                    \
            return PI_REAL(name)(fd, v, n, at, flags);                                            \
        uint64_t start = pi_clock_ticks();                                                        \
        ssize_t result = PI_REAL(name)(fd, v, n, at, flags);                                      \
        io_record(op, fd, start, (int64_t)result, result < 0);                                    \
        return result;                                                                            \
    }

PI_VECTOR_HOOK(preadv2, PI_IO_PREADV2)
PI_VECTOR_HOOK(preadv64v2, PI_IO_PREADV2)
PI_VECTOR_HOOK(pwritev2, PI_IO_PWRITEV2)
PI_VECTOR_HOOK(pwritev64v2, PI_IO_PWRITEV2)

/* The bytes of the first @count messages of @messages (what the kernel filled in msg_len). */
static int64_t message_bytes(const struct mmsghdr *messages, int count)
{
    int64_t bytes = 0;
    for (int i = 0; i < count; i++)
        bytes += messages[i].msg_len;
    return bytes;
}

PI_EXPORT int recvmmsg(int fd, struct mmsghdr *messages, unsigned int n, int flags,
                       struct timespec *timeout)
{
    if (!pi_hook_active())
        return PI_REAL(recvmmsg)(fd, messages, n, flags, timeout);
    uint64_t start = pi_clock_ticks();
    int result = PI_REAL(recvmmsg)(fd, messages, n, flags, timeout);
    io_record(PI_IO_RECVMMSG, fd, start, result < 0 ? -1 : message_bytes(messages, result),
              result < 0);
    return result;
}

PI_EXPORT int sendmmsg(int fd, struct mmsghdr *messages, unsigned int n, int flags)
{
    if (!pi_hook_active())
        return PI_REAL(sendmmsg)(fd, messages, n, flags);
    uint64_t start = pi_clock_ticks();
    int result = PI_REAL(sendmmsg)(fd, messages, n, flags);
    io_record(PI_IO_SENDMMSG, fd, start, result < 0 ? -1 : message_bytes(messages, result),
              result < 0);
    return result;
}

/* Copies inside the kernel: recorded on the descriptor read from (a dataset's file). */
PI_EXPORT ssize_t copy_file_range(int in, off_t *in_at, int out, off_t *out_at, size_t n,
                                  unsigned int flags)
{
    if (!pi_hook_active())
        return PI_REAL(copy_file_range)(in, in_at, out, out_at, n, flags);
    uint64_t start = pi_clock_ticks();
    ssize_t result = PI_REAL(copy_file_range)(in, in_at, out, out_at, n, flags);
    io_record(PI_IO_COPY_FILE_RANGE, in, start, (int64_t)result, result < 0);
    return result;
}

#define PI_SENDFILE_HOOK(name)                                                                    \
    PI_EXPORT ssize_t name(int out, int in, off_t *at, size_t n)                                  \
    {                                                                                             \
        if (!pi_hook_active())                                                                    \
            return PI_REAL(name)(out, in, at, n);                                                 \
        uint64_t start = pi_clock_ticks();                                                        \
        ssize_t result = PI_REAL(name)(out, in, at, n);                                           \
        io_record(PI_IO_SENDFILE, in, start, (int64_t)result, result < 0);                        \
        return result;                                                                            \
    }

PI_SENDFILE_HOOK(sendfile)
PI_SENDFILE_HOOK(sendfile64)
