/*
 * stderr_tail.h - the last words of a process: the end of what it wrote to
 * its standard error, kept in a ring and written into the trace as it ends
 * (exit, _exit, a fatal signal), so that the report can quote the error a
 * job died of (a Python traceback's last lines, an NCCL timeout). At most
 * PI_STDERR_TAIL_BYTES, the longest string the format keeps; off with
 * PROFINJECT_STDERR_TAIL=0.
 */
#ifndef PI_STDERR_TAIL_H
#define PI_STDERR_TAIL_H

#include <stddef.h>

#define PI_STDERR_TAIL_BYTES 4096

/* pi_stderr_tail_start - follow fd 2 from now on, and write the tail at the end */
void pi_stderr_tail_start(void);

/* pi_stderr_tail_note - @n bytes of @buf were written to descriptor @fd */
void pi_stderr_tail_note(int fd, const void *buf, size_t n);

#endif
