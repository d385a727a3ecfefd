/* fd_table.c - per-descriptor class and path (see fd_table.h). */
#include "fd_table.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "profinject/trace_format.h"
#include "core/raw_syscalls.h"
#include "core/recorder.h"

_Atomic uint32_t pi_fd_words[PI_FD_TABLE_SIZE];

static uint32_t class_of(const struct stat *st)
{
    switch (st->st_mode & S_IFMT) {
    case S_IFREG:
        return PI_FD_FILE;
    case S_IFIFO:
        return PI_FD_PIPE;
    case S_IFSOCK:
        return PI_FD_SOCKET;
    case S_IFBLK:
        return PI_FD_DEVICE;
    case S_IFCHR: {
        /* Linux tty majors: 4 (tty, ttyS), 5 (tty, console, ptmx), 136-143 (pts) */
        unsigned major = major(st->st_rdev);
        return major == 4 || major == 5 || (major >= 136 && major <= 143) ? PI_FD_TTY
                                                                           : PI_FD_DEVICE;
    }
    default:
        return PI_FD_OTHER;
    }
}

uint32_t pi_fd_classify_slow(int fd)
{
    int saved = errno;
    struct stat st;
    uint32_t word = atomic_load_explicit(&pi_fd_words[fd], memory_order_relaxed);
    uint32_t path_id = PI_FD_WORD_PATH(word);
    if (syscall(SYS_fstat, fd, &st) != 0) {
        errno = saved;
        return 0; /* not open (yet): do not cache */
    }
    uint32_t fd_class = class_of(&st);
    if (fd_class == PI_FD_FILE && path_id == 0) {
        char link[32], path[PI_MAX_STRING_LEN];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = syscall(SYS_readlinkat, AT_FDCWD, link, path, sizeof(path));
        if (n > 0)
            path_id = pi_intern_path(path, (uint64_t)n);
    }
    word = PI_FD_WORD(fd_class, path_id);
    atomic_store_explicit(&pi_fd_words[fd], word, memory_order_relaxed);
    errno = saved;
    return word;
}

void pi_fd_opened(int fd, uint32_t path_id)
{
    if ((unsigned)fd < PI_FD_TABLE_SIZE)
        atomic_store_explicit(&pi_fd_words[fd], PI_FD_WORD(PI_FD_UNKNOWN, path_id),
                              memory_order_relaxed);
}

void pi_fd_forget(int fd)
{
    if ((unsigned)fd < PI_FD_TABLE_SIZE)
        atomic_store_explicit(&pi_fd_words[fd], 0, memory_order_relaxed);
}

void pi_fd_copy(int from, int to)
{
    if ((unsigned)to >= PI_FD_TABLE_SIZE)
        return;
    uint32_t word = (unsigned)from < PI_FD_TABLE_SIZE
                        ? atomic_load_explicit(&pi_fd_words[from], memory_order_relaxed)
                        : 0;
    atomic_store_explicit(&pi_fd_words[to], word, memory_order_relaxed);
}
