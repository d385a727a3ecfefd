/*
 * fatal_signals.h - the trace is written out when a signal ends the
 * process; the application's own handlers still run afterwards.
 */
#ifndef PI_FATAL_SIGNALS_H
#define PI_FATAL_SIGNALS_H

#include <signal.h>
#include <stdint.h>

/**
 * pi_fatal_signal_moment - during PI_EVENT_FATAL_FRAMES, the fatal signal's record
 * @ts: receives the start of its PI_REC_FATAL_SIGNAL record
 * @in_profiler: receives nonzero when it came while the thread ran the profiler's code
 * @context: receives the handler's ucontext_t, the interrupted thread's registers
 *
 * Return: nonzero when the calling thread is the one ending the process on a signal.
 */
int pi_fatal_signal_moment(uint64_t *ts, int *in_profiler, void **context);

/* pi_fatal_signals_install - put our handler in front of each handled signal (at start-up) */
void pi_fatal_signals_install(void);

/* pi_fatal_signal_handled - nonzero when @sig is one whose end we write out */
int pi_fatal_signal_handled(int sig);

/**
 * pi_fatal_signal_set - the application's sigaction() for a handled signal
 * @sig: the signal
 * @act: the new disposition, kept as the chained one (SIG_IGN is installed for real)
 * @old: receives the disposition the application set last
 *
 * Return: 0, or -1 with errno set by the kernel.
 */
int pi_fatal_signal_set(int sig, const struct sigaction *act, struct sigaction *old);

#endif
