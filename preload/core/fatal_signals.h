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

/* A stop signal (SIGINT, SIGTERM, SIGHUP) that the application's own handler took. */
struct pi_stop_signal {
    uint64_t ts;
    uint32_t tid;              /* the thread it was delivered to */
    unsigned flags;            /* PI_SIGNAL_HANDLED, with PI_SIGNAL_SENT when a process sent it */
    uint64_t signal_and_code;  /* PI_REC_FATAL_SIGNAL's arg0 */
    uint64_t from;             /* its arg1 */
};

/**
 * pi_stop_signal_take - the first stop signal the application's handler took since the last
 * call, for the writer to record (PI_REC_FATAL_SIGNAL with PI_SIGNAL_HANDLED)
 * @out: receives it
 *
 * Return: 1 when there was one, else 0.
 */
int pi_stop_signal_take(struct pi_stop_signal *out);

/**
 * pi_signal_senders_take - the processes that sent stop signals since the last call, for the
 * writer to name (PI_REC_SIGNAL_SENDER): the one that sent the signal ending the process and
 * the one whose signal the application's handler took
 * @pids: receives up to 2 pids, @signals their signals
 *
 * Return: how many.
 */
int pi_signal_senders_take(uint32_t pids[2], uint32_t signals[2]);

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
