/*
 * io_hooks.c - file, pipe and socket I/O: opens, closes, reads, writes,
 * socket sends and receives, readiness waits (poll, select, epoll) and
 * file mappings. Every call becomes one PI_REC_IO record with bytes,
 * latency and the descriptor's class (and path, for regular files).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

#include "core/hook.h"
#include "io_record.h"
#include "stderr_tail.h"

/* A hook for a call on one descriptor that returns a count, -1 on error. */
#define PI_IO_HOOK(ret, name, op, params, args)                                                   \
    PI_EXPORT ret name params                                                                     \
    {                                                                                             \
        if (!pi_hook_active())                                                                    \
            return PI_REAL(name) args;                                                            \
        uint64_t start = pi_clock_ticks();                                                        \
        uint32_t word = io_wait_begin(op, fd, start);                                             \
        ret result = PI_REAL(name) args;                                                          \
        io_record_word(op, fd, word, start, (int64_t)result, result < 0);                         \
        return result;                                                                            \
    }

PI_IO_HOOK(ssize_t, read, PI_IO_READ, (int fd, void *buf, size_t n), (fd, buf, n))
PI_IO_HOOK(ssize_t, pread, PI_IO_PREAD, (int fd, void *buf, size_t n, off_t at), (fd, buf, n, at))
PI_IO_HOOK(ssize_t, pread64, PI_IO_PREAD, (int fd, void *buf, size_t n, off_t at), (fd, buf, n, at))
PI_IO_HOOK(ssize_t, readv, PI_IO_READV, (int fd, const struct iovec *v, int n), (fd, v, n))
PI_IO_HOOK(ssize_t, preadv, PI_IO_PREADV, (int fd, const struct iovec *v, int n, off_t at),
           (fd, v, n, at))
PI_IO_HOOK(ssize_t, preadv64, PI_IO_PREADV, (int fd, const struct iovec *v, int n, off_t at),
           (fd, v, n, at))
/* write: as the others, and what goes to stderr into the process's last words */
PI_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    if (!pi_hook_active())
        return PI_REAL(write)(fd, buf, n);
    uint64_t start = pi_clock_ticks();
    uint32_t word = io_wait_begin(PI_IO_WRITE, fd, start);
    ssize_t result = PI_REAL(write)(fd, buf, n);
    io_record_word(PI_IO_WRITE, fd, word, start, (int64_t)result, result < 0);
    if (result > 0)
        pi_stderr_tail_note(fd, buf, (size_t)result);
    return result;
}
PI_IO_HOOK(ssize_t, pwrite, PI_IO_PWRITE, (int fd, const void *buf, size_t n, off_t at),
           (fd, buf, n, at))
PI_IO_HOOK(ssize_t, pwrite64, PI_IO_PWRITE, (int fd, const void *buf, size_t n, off_t at),
           (fd, buf, n, at))
PI_IO_HOOK(ssize_t, writev, PI_IO_WRITEV, (int fd, const struct iovec *v, int n), (fd, v, n))
PI_IO_HOOK(ssize_t, pwritev, PI_IO_PWRITEV, (int fd, const struct iovec *v, int n, off_t at),
           (fd, v, n, at))
PI_IO_HOOK(ssize_t, pwritev64, PI_IO_PWRITEV, (int fd, const struct iovec *v, int n, off_t at),
           (fd, v, n, at))
PI_IO_HOOK(ssize_t, recv, PI_IO_RECV, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
PI_IO_HOOK(ssize_t, recvfrom, PI_IO_RECVFROM,
           (int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *len),
           (fd, buf, n, flags, from, len))
PI_IO_HOOK(ssize_t, recvmsg, PI_IO_RECVMSG, (int fd, struct msghdr *msg, int flags),
           (fd, msg, flags))
PI_IO_HOOK(ssize_t, send, PI_IO_SEND, (int fd, const void *buf, size_t n, int flags),
           (fd, buf, n, flags))
PI_IO_HOOK(ssize_t, sendto, PI_IO_SENDTO,
           (int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t len),
           (fd, buf, n, flags, to, len))
PI_IO_HOOK(ssize_t, sendmsg, PI_IO_SENDMSG, (int fd, const struct msghdr *msg, int flags),
           (fd, msg, flags))
/* epoll: the descriptor is the epoll instance's */
PI_IO_HOOK(int, epoll_wait, PI_IO_EPOLL_WAIT, (int fd, struct epoll_event *ev, int n, int ms),
           (fd, ev, n, ms))
PI_IO_HOOK(int, epoll_pwait, PI_IO_EPOLL_WAIT,
           (int fd, struct epoll_event *ev, int n, int ms, const sigset_t *mask),
           (fd, ev, n, ms, mask))

/* ---- opening: the path is interned and remembered for the descriptor ---- */

static int needs_mode(int flags)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static int record_open(const char *path, uint64_t start, int fd)
{
    int saved = errno;
    int guard = pi_guard_enter();
    uint32_t path_id = path ? pi_intern_path(path, strlen(path)) : 0;
    pi_guard_restore(guard);
    uint64_t end = pi_clock_ticks();
    /* what was opened (a file, a device, a pipe's name): classed now, one fstat, so the open
     * is told apart like the calls that follow (it was "open unknown") */
    unsigned fd_class = PI_FD_UNKNOWN;
    if (fd >= 0) {
        pi_fd_opened(fd, path_id);
        fd_class = PI_FD_WORD_CLASS(pi_fd_lookup(fd));
    }
    pi_emit(PI_REC_IO, PI_IO_FLAGS(PI_IO_OPEN, fd_class, fd < 0), start, end - start,
            (uint64_t)(int64_t)fd, fd < 0 ? (uint64_t)-(int64_t)saved : (uint64_t)fd, path_id);
    errno = saved;
    return fd;
}

#define PI_OPEN_HOOK(name, dirfd_param, dirfd_arg)                                                \
    PI_EXPORT int name(dirfd_param const char *path, int flags, ...)                              \
    {                                                                                             \
        mode_t mode = 0;                                                                          \
        if (needs_mode(flags)) {                                                                  \
            va_list args;                                                                         \
            va_start(args, flags);                                                                \
            mode = va_arg(args, mode_t);                                                          \
            va_end(args);                                                                         \
        }                                                                                         \
        if (!pi_hook_active())                                                                    \
            return PI_REAL(name)(dirfd_arg path, flags, mode);                                    \
        uint64_t start = pi_clock_ticks();                                                        \
        return record_open(path, start, PI_REAL(name)(dirfd_arg path, flags, mode));              \
    }

#define PI_NO_DIRFD
#define PI_COMMA ,
PI_OPEN_HOOK(open, PI_NO_DIRFD, PI_NO_DIRFD)
PI_OPEN_HOOK(open64, PI_NO_DIRFD, PI_NO_DIRFD)
PI_OPEN_HOOK(openat, int dirfd PI_COMMA, dirfd PI_COMMA)
PI_OPEN_HOOK(openat64, int dirfd PI_COMMA, dirfd PI_COMMA)

/* The _FORTIFY_SOURCE entry points and creat take no variadic mode. */
#define PI_FIXED_OPEN_HOOK(name, params, args, path)                                              \
    PI_EXPORT int name params                                                                     \
    {                                                                                             \
        if (!pi_hook_active())                                                                    \
            return PI_REAL(name) args;                                                            \
        uint64_t start = pi_clock_ticks();                                                        \
        return record_open(path, start, PI_REAL(name) args);                                      \
    }

PI_FIXED_OPEN_HOOK(__open_2, (const char *path, int flags), (path, flags), path)
PI_FIXED_OPEN_HOOK(__open64_2, (const char *path, int flags), (path, flags), path)
PI_FIXED_OPEN_HOOK(__openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), path)
PI_FIXED_OPEN_HOOK(__openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
                   path)
PI_FIXED_OPEN_HOOK(creat, (const char *path, mode_t mode), (path, mode), path)
PI_FIXED_OPEN_HOOK(creat64, (const char *path, mode_t mode), (path, mode), path)

/* ---- closing and duplicating keep the descriptor table true ---- */

PI_EXPORT int close(int fd)
{
    if (!pi_hook_active()) {
        pi_fd_forget(fd);
        return PI_REAL(close)(fd);
    }
    uint64_t start = pi_clock_ticks();
    uint32_t word = pi_fd_lookup(fd);
    pi_fd_forget(fd);
    int result = PI_REAL(close)(fd);
    uint64_t end = pi_clock_ticks();
    int saved = errno;
    pi_emit(PI_REC_IO, PI_IO_FLAGS(PI_IO_CLOSE, PI_FD_WORD_CLASS(word), result < 0), start,
            end - start, (uint64_t)(int64_t)fd, result < 0 ? (uint64_t)-(int64_t)saved : 0,
            PI_FD_WORD_PATH(word));
    errno = saved;
    return result;
}

PI_EXPORT int dup(int fd)
{
    pi_ensure_init();
    int result = PI_REAL(dup)(fd);
    if (result >= 0)
        pi_fd_copy(fd, result);
    return result;
}

PI_EXPORT int dup2(int fd, int to)
{
    pi_ensure_init();
    int result = PI_REAL(dup2)(fd, to);
    if (result >= 0)
        pi_fd_copy(fd, to);
    return result;
}

PI_EXPORT int dup3(int fd, int to, int flags)
{
    pi_ensure_init();
    int result = PI_REAL(dup3)(fd, to, flags);
    if (result >= 0)
        pi_fd_copy(fd, to);
    return result;
}

/* ---- readiness waits: classified by the first descriptor waited on ---- */

static int first_polled(const struct pollfd *fds, nfds_t n)
{
    for (nfds_t i = 0; i < n; i++)
        if (fds[i].fd >= 0)
            return fds[i].fd;
    return -1;
}

static int first_selected(int n, const fd_set *read_set, const fd_set *write_set)
{
    for (int fd = 0; fd < n && fd < FD_SETSIZE; fd++)
        if ((read_set && FD_ISSET(fd, read_set)) || (write_set && FD_ISSET(fd, write_set)))
            return fd;
    return -1;
}

PI_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    if (!pi_hook_active())
        return PI_REAL(poll)(fds, n, timeout);
    uint64_t start = pi_clock_ticks();
    io_wait_begin(PI_IO_POLL, first_polled(fds, n), start);
    int result = PI_REAL(poll)(fds, n, timeout);
    io_record(PI_IO_POLL, first_polled(fds, n), start, result, result < 0);
    return result;
}

PI_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                    const sigset_t *mask)
{
    if (!pi_hook_active())
        return PI_REAL(ppoll)(fds, n, timeout, mask);
    uint64_t start = pi_clock_ticks();
    io_wait_begin(PI_IO_PPOLL, first_polled(fds, n), start);
    int result = PI_REAL(ppoll)(fds, n, timeout, mask);
    io_record(PI_IO_PPOLL, first_polled(fds, n), start, result, result < 0);
    return result;
}

PI_EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
    if (!pi_hook_active())
        return PI_REAL(select)(n, r, w, e, timeout);
    int fd = first_selected(n, r, w); /* before select overwrites the sets */
    uint64_t start = pi_clock_ticks();
    io_wait_begin(PI_IO_SELECT, fd, start);
    int result = PI_REAL(select)(n, r, w, e, timeout);
    io_record(PI_IO_SELECT, fd, start, result, result < 0);
    return result;
}

PI_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
                      const sigset_t *mask)
{
    if (!pi_hook_active())
        return PI_REAL(pselect)(n, r, w, e, timeout, mask);
    int fd = first_selected(n, r, w);
    uint64_t start = pi_clock_ticks();
    io_wait_begin(PI_IO_PSELECT, fd, start);
    int result = PI_REAL(pselect)(n, r, w, e, timeout, mask);
    io_record(PI_IO_PSELECT, fd, start, result, result < 0);
    return result;
}

/* ---- file mappings (anonymous ones pass straight through) ---- */

#define PI_MMAP_HOOK(name)                                                                        \
    PI_EXPORT void *name(void *addr, size_t length, int prot, int flags, int fd, off_t offset)   \
    {                                                                                             \
        if (fd < 0 || (flags & MAP_ANONYMOUS) || !pi_hook_active())                               \
            return PI_REAL(name)(addr, length, prot, flags, fd, offset);                          \
        uint64_t start = pi_clock_ticks();                                                        \
        void *result = PI_REAL(name)(addr, length, prot, flags, fd, offset);                      \
        io_record(PI_IO_MMAP, fd, start, (int64_t)length, result == MAP_FAILED);                  \
        return result;                                                                            \
    }

PI_MMAP_HOOK(mmap)
PI_MMAP_HOOK(mmap64)
