/*
 * blocked_threads.h - at a fatal signal, what each thread was blocked in:
 * one PI_REC_WAIT_IN_FLIGHT a thread, with its Python frames.
 */
#ifndef PI_BLOCKED_THREADS_H
#define PI_BLOCKED_THREADS_H

/* pi_blocked_threads_start - subscribe to the fatal signal's last stage, and give the
 * waits their Python thread states once an interpreter is found */
void pi_blocked_threads_start(void);

#endif
