/*
 * fd_table.h - what each file descriptor is, found once.
 *
 * One 32-bit word per descriptor number: the class (enum pi_fd_class) in
 * the low byte, the interned path of a regular file above it. A word of 0
 * means "not looked at yet": the first I/O call on the descriptor pays one
 * fstat (and, for a file nobody saw opened, one readlink), every later one
 * a single load. open() fills in the path, close() and dup2() keep the
 * table true when descriptor numbers are reused.
 */
#ifndef PI_FD_TABLE_H
#define PI_FD_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "profinject/trace_format.h"

#define PI_FD_TABLE_SIZE 65536

extern _Atomic uint32_t pi_fd_words[PI_FD_TABLE_SIZE];

#define PI_FD_WORD(fd_class, path_id) ((uint32_t)(fd_class) | ((uint32_t)(path_id) << 8))
#define PI_FD_WORD_CLASS(word) ((word) & 0xffu)
#define PI_FD_WORD_PATH(word) ((word) >> 8)

/* pi_fd_classify_slow - fstat (and readlink) @fd, store and return its word */
uint32_t pi_fd_classify_slow(int fd);

/* pi_fd_lookup - class and path of @fd, classifying it on first use */
static inline uint32_t pi_fd_lookup(int fd)
{
    if ((unsigned)fd >= PI_FD_TABLE_SIZE)
        return fd < 0 ? 0 : PI_FD_OTHER;
    uint32_t word = atomic_load_explicit(&pi_fd_words[fd], memory_order_relaxed);
    if (__builtin_expect(PI_FD_WORD_CLASS(word) != PI_FD_UNKNOWN, 1))
        return word;
    return pi_fd_classify_slow(fd);
}

/* pi_fd_opened - @fd was just opened from @path_id (class found on first I/O) */
void pi_fd_opened(int fd, uint32_t path_id);

/* pi_fd_forget - @fd was closed */
void pi_fd_forget(int fd);

/* pi_fd_copy - @to now refers to what @from refers to (dup2, dup3) */
void pi_fd_copy(int from, int to);

#endif
