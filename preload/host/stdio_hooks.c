/*
 * stdio_hooks.c - fopen, fclose, fread and fwrite. glibc's stdio reads and
 * writes through internal calls that never reach the read/write hooks, so
 * these are recorded on their own (PI_IO_FOPEN, PI_IO_FREAD, ...).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fd_table.h"
#include "core/hook.h"

static void stdio_record(unsigned op, FILE *stream, uint64_t start, int64_t result, int failed)
{
    uint64_t end = pi_clock_ticks();
    int saved = errno;
    int fd = stream ? fileno_unlocked(stream) : -1;
    uint32_t word = pi_fd_lookup(fd);
    pi_emit(PI_REC_IO, PI_IO_FLAGS(op, PI_FD_WORD_CLASS(word), failed), start, end - start,
            (uint64_t)(int64_t)fd, failed ? (uint64_t)-(int64_t)saved : (uint64_t)result,
            PI_FD_WORD_PATH(word));
    errno = saved;
}

static FILE *record_fopen(const char *path, uint64_t start, FILE *stream)
{
    int saved = errno;
    if (stream) {
        int guard = pi_guard_enter();
        pi_fd_opened(fileno_unlocked(stream), path ? pi_intern_path(path, strlen(path)) : 0);
        pi_guard_restore(guard);
    }
    errno = saved;
    stdio_record(PI_IO_FOPEN, stream, start, stream ? fileno_unlocked(stream) : -1, !stream);
    return stream;
}

PI_EXPORT FILE *fopen(const char *path, const char *mode)
{
    if (!pi_hook_active())
        return PI_REAL(fopen)(path, mode);
    uint64_t start = pi_clock_ticks();
    return record_fopen(path, start, PI_REAL(fopen)(path, mode));
}

PI_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    if (!pi_hook_active())
        return PI_REAL(fopen64)(path, mode);
    uint64_t start = pi_clock_ticks();
    return record_fopen(path, start, PI_REAL(fopen64)(path, mode));
}

PI_EXPORT int fclose(FILE *stream)
{
    int fd = stream ? fileno_unlocked(stream) : -1;
    if (!pi_hook_active()) {
        pi_fd_forget(fd);
        return PI_REAL(fclose)(stream);
    }
    uint64_t start = pi_clock_ticks();
    uint32_t word = pi_fd_lookup(fd);
    pi_fd_forget(fd); /* fclose closes the descriptor without the close hook */
    int result = PI_REAL(fclose)(stream);
    uint64_t end = pi_clock_ticks();
    int saved = errno;
    pi_emit(PI_REC_IO, PI_IO_FLAGS(PI_IO_FCLOSE, PI_FD_WORD_CLASS(word), result != 0), start,
            end - start, (uint64_t)(int64_t)fd, result ? (uint64_t)-(int64_t)saved : 0,
            PI_FD_WORD_PATH(word));
    errno = saved;
    return result;
}

PI_EXPORT size_t fread(void *buf, size_t size, size_t count, FILE *stream)
{
    if (!pi_hook_active())
        return PI_REAL(fread)(buf, size, count, stream);
    uint64_t start = pi_clock_ticks();
    size_t items = PI_REAL(fread)(buf, size, count, stream);
    stdio_record(PI_IO_FREAD, stream, start, (int64_t)(items * size), items < count && ferror(stream));
    return items;
}

PI_EXPORT size_t fwrite(const void *buf, size_t size, size_t count, FILE *stream)
{
    if (!pi_hook_active())
        return PI_REAL(fwrite)(buf, size, count, stream);
    uint64_t start = pi_clock_ticks();
    size_t items = PI_REAL(fwrite)(buf, size, count, stream);
    stdio_record(PI_IO_FWRITE, stream, start, (int64_t)(items * size), items < count);
    return items;
}
