/*
 * unfinished_writer.h - a process that ends while its writer thread is
 * still busy (a stalled disk, a frame that takes seconds to write) goes
 * without waiting longer; what the writer had not written is lost, and
 * that is said: one profinject: line with the count, and a LOST record at
 * the end of the trace when the file can still take it.
 */
#ifndef PI_UNFINISHED_WRITER_H
#define PI_UNFINISHED_WRITER_H

/**
 * pi_writer_abandon - called by the thread that ends the process once the
 * writer did not finish within @waited_ms: shut the writer out of the trace
 * file for good, count the records not written, record the loss in the
 * trace (when the writer is not inside a write and the file has its header)
 * and say it on stderr
 */
void pi_writer_abandon(unsigned waited_ms);

#endif
