/*
 * process_words.h - a process of the job in words, for the findings on
 * how processes ended (verdict_death.c, verdict_stop.c): what the job
 * calls it, how far the training loop had got, and where it was then;
 * and what every finding calls its loop (a serving process's is no
 * training loop).
 */
#ifndef PI_PROCESS_WORDS_H
#define PI_PROCESS_WORDS_H

#include <stddef.h>
#include <stdint.h>

#include "verdict.h"

/* pi_process_role - what the job calls @p ("the training process", "rank 2", "a worker of
 * the training process"), written into @buf where needed; NULL when it is no process of the
 * job's own (a helper program) */
const char *pi_process_role(const struct pi_process_info *p,
                            const struct pi_process_info *training, char *buf, size_t size);

/* pi_loop_name - what the findings call @p's loop: "the serving loop" where it served
 * requests (inference is not training), else "the training loop" */
const char *pi_loop_name(const struct pi_process_info *p);

/* pi_steps_done_by - the training loop's steps complete by @ns */
uint64_t pi_steps_done_by(const struct pi_process_info *training, uint64_t ns);

/* pi_steps_started_by - the training loop's steps begun by @ns: a step cut by the process's
 * end is none, so at a stop these are the steps it did (in summary mode the last one's end
 * can read a little after the signal) */
uint64_t pi_steps_started_by(const struct pi_process_info *training, uint64_t ns);

/* pi_printable - @text (of @length) into @out with control characters as \xHH: a traced
 * name or a line of stderr must not drive the analyst's terminal */
void pi_printable(char *out, size_t size, const char *text, size_t length);

/* pi_blocked_words - what @b was blocked in, and where: "a condition wait in all_reduce
 * (torch/distributed/distributed_c10d.py:3252), called at train.py:48 in main"; the call
 * is the innermost Python frame, the line the innermost outside installed libraries */
void pi_blocked_words(const struct pi_blocked_thread *b, char *out, size_t size);

/**
 * pi_process_whereabouts - where @p was at its end, in words after "; ": what its main
 * thread was blocked in when a fatal signal ended it, else where its signal found the thread
 * (@at_signal, of thread @tid, when it has Python frames), else where its main thread was
 * last seen; then how long its main thread had not run, when a second or more (@terse: in a
 * few words, for a list of processes). Sets @f's line (the blocked call's or the signal's
 * place) and its blocked_s and main_still_s evidence.
 */
void pi_process_whereabouts(const struct pi_process_info *p, const struct pi_call_site *at_signal,
                            uint32_t tid, int terse, struct pi_finding *f, char *out, size_t size);

#endif
