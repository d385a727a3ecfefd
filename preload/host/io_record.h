/*
 * io_record.h - the record of one finished I/O call on a descriptor, for
 * the I/O hooks (io_hooks.c, io_vector_hooks.c): bytes or result, latency,
 * the descriptor's class and path, and the main thread's waits' call site.
 */
#ifndef PI_IO_RECORD_H
#define PI_IO_RECORD_H

#include <errno.h>

#include "callsite/call_sites.h"
#include "core/recorder.h"
#include "fd_table.h"

/* The call on @fd about to be made may block: keep it as the thread's wait in flight until
 * io_record (recorder.h: pi_wait_begin). Return: @fd's word, for io_record_word. */
static inline uint32_t io_wait_begin(unsigned op, int fd, uint64_t start)
{
    uint32_t word = pi_fd_lookup(fd);
    pi_wait_begin(PI_IN_FLIGHT_IO_CALL(op, PI_FD_WORD_CLASS(word)), (uint64_t)(int64_t)fd, start);
    return word;
}

/* Record a finished call on @fd, whose word (pi_fd_lookup) is @word; @failed when it
 * returned the error value. Nothing here changes errno. */
static inline void io_record_word(unsigned op, int fd, uint32_t word, uint64_t start,
                                  int64_t result, int failed)
{
    uint64_t end = pi_clock_ticks();
    pi_wait_end();
    if (__builtin_expect(failed, 0))
        result = -(int64_t)errno;
    uint16_t flags = PI_IO_FLAGS(op, PI_FD_WORD_CLASS(word), failed);
    pi_emit(PI_REC_IO, flags, start, end - start, (uint64_t)(int64_t)fd, (uint64_t)result,
            PI_FD_WORD_PATH(word));
    if (pi_call_site_io_wait(op, PI_FD_WORD_CLASS(word)))
        pi_call_site_wait(PI_REC_IO, flags, 0, start, end - start);
}

/* The same for a call whose descriptor was not looked up before it (pi_fd_lookup's slow
 * path saves errno). */
static inline void io_record(unsigned op, int fd, uint64_t start, int64_t result, int failed)
{
    io_record_word(op, fd, pi_fd_lookup(fd), start, result, failed);
}

#endif
