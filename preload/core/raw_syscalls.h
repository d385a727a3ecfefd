/*
 * raw_syscalls.h - the profiler's own file and futex calls, made as direct
 * system calls so they never enter the profiler's hooks (or anyone else's
 * interposers) and never touch errno-visible state of libc beyond errno,
 * which callers save.
 */
#ifndef PI_RAW_SYSCALLS_H
#define PI_RAW_SYSCALLS_H

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* pi_sys_anonymous_map - @size bytes of private anonymous memory, untouched until used; MAP_FAILED on error */
static inline void *pi_sys_anonymous_map(size_t size)
{
    long result = syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return result == -1 ? MAP_FAILED : (void *)result;
}

static inline int pi_sys_open(const char *path, int flags, mode_t mode)
{
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

/* pi_sys_stat - stat (@flags 0) or lstat (AT_SYMLINK_NOFOLLOW) of @path; glibc's
 * own stat and lstat bind to GLIBC_2.33 (see glibc_versions.h). On x86-64 and
 * arm64 the kernel's struct stat is glibc's. */
static inline int pi_sys_stat(const char *path, struct stat *st, int flags)
{
    return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, flags);
}

static inline ssize_t pi_sys_read(int fd, void *buf, size_t len)
{
    return syscall(SYS_read, fd, buf, len);
}

static inline ssize_t pi_sys_pread(int fd, void *buf, size_t len, off_t offset)
{
    return syscall(SYS_pread64, fd, buf, len, offset);
}

/* pi_sys_proc_self_pid - what /proc/self names: this process's pid in the namespace of
 * /proc's mount (0: none, or not a number). The first pid of the NSpid line of
 * /proc/self/status says the same, at 18 us to format and read against 2 us for the link
 * on the development VM. */
static inline int pi_sys_proc_self_pid(void)
{
    char link[32];
    long n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self", link, sizeof(link) - 1);
    int pid = 0;
    for (long i = 0; i < n; i++) {
        if (link[i] < '0' || link[i] > '9' || pid > 100000000)
            return 0;
        pid = pid * 10 + (link[i] - '0');
    }
    return pid;
}

static inline int pi_sys_close(int fd)
{
    return (int)syscall(SYS_close, fd);
}

/* pi_sys_read_file - the whole of a small file (/proc, /sys) at @path into @buf, NUL-terminated,
 * at most @size - 1 bytes: their count, 0 when it cannot be read */
static inline size_t pi_sys_read_file(const char *path, char *buf, size_t size)
{
    int fd = pi_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
    size_t total = 0;
    while (fd >= 0 && total + 1 < size) {
        ssize_t n = pi_sys_read(fd, buf + total, size - 1 - total);
        if (n <= 0)
            break;
        total += (size_t)n;
    }
    if (fd >= 0)
        pi_sys_close(fd);
    if (size)
        buf[total] = '\0';
    return total;
}

/* the CPU to another runnable thread: a thread that waits for another's short work */
static inline void pi_sys_yield(void)
{
    syscall(SYS_sched_yield);
}

static inline uint32_t pi_sys_gettid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

/* pi_sys_write_all - write @len bytes, retrying short writes and EINTR; 0 or -1 with errno */
static inline int pi_sys_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = syscall(SYS_write, fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* pi_sys_thread_is_ours - whether thread @tid is one of the calling process's (signal 0 is
 * checked, never sent) */
static inline int pi_sys_thread_is_ours(uint32_t tid)
{
    return syscall(SYS_tgkill, getpid(), (pid_t)tid, 0) == 0;
}

/* pi_sys_sleep - sleep @ns, not through the sleep hooks: the profiler's own pauses */
static inline void pi_sys_sleep(uint64_t ns)
{
    int saved = errno;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    syscall(SYS_nanosleep, &ts, NULL);
    errno = saved;
}

/* pi_futex_wait - sleep while *@word == @expected, at most @timeout_ns (0: no limit) */
static inline void pi_futex_wait(void *word, uint32_t expected, uint64_t timeout_ns)
{
    int saved = errno;
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout_ns ? &ts : NULL, NULL, 0);
    errno = saved;
}

/* pi_futex_wake - wake up to @count waiters on @word */
static inline void pi_futex_wake(void *word, int count)
{
    int saved = errno;
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
    errno = saved;
}

#endif
