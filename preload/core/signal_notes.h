/*
 * signal_notes.h - what a signal handler leaves for the writer to record.
 * A handler that returns to the application must not touch its thread's
 * buffer (the code it interrupted may be filling it): it notes a stop
 * signal that the application's own handler takes, and the processes that
 * sent stop signals, here; the writer records them at its next flush.
 */
#ifndef PI_SIGNAL_NOTES_H
#define PI_SIGNAL_NOTES_H

#include <stdint.h>

/* A stop signal (SIGINT, SIGTERM, SIGHUP) that the application's own handler took. */
struct pi_stop_signal {
    uint64_t ts;
    uint32_t tid;              /* the thread it was delivered to */
    unsigned flags;            /* PI_SIGNAL_HANDLED, with PI_SIGNAL_SENT when a process sent it */
    uint64_t signal_and_code;  /* PI_REC_FATAL_SIGNAL's arg0 */
    uint64_t from;             /* its arg1 */
};

/* pi_signal_note_stop - keep @stop unless one not yet recorded is kept: the first of a
 * burst says who stopped the job. Async-signal-safe. Return: 1 when kept. */
int pi_signal_note_stop(const struct pi_stop_signal *stop);

/**
 * pi_stop_signal_take - the stop signal kept since the last call, for the writer to record
 * (PI_REC_FATAL_SIGNAL with PI_SIGNAL_HANDLED)
 * @out: receives it
 *
 * Return: 1 when there was one, else 0.
 */
int pi_stop_signal_take(struct pi_stop_signal *out);

/* pi_signal_note_sender - have the writer name process @pid, which sent stop signal @sig;
 * @slot 0 for the signal ending the process, 1 for one its handler took. Async-signal-safe. */
void pi_signal_note_sender(int slot, uint32_t pid, int sig);

/* The processes that sent stop signals, by their command lines. */
struct pi_signal_senders {
    uint32_t pids[2], signals[2];
    uint32_t commands[2]; /* string ids; 0: gone or not readable */
    int count;
};

/* pi_signal_senders_name - the processes noted since the last call, each with its command
 * line as /proc has it now, interned (even as the process ends), into @out; for the writer,
 * before it drains the buffers, so that the strings are defined ahead of their records
 * (PI_REC_SIGNAL_SENDER) */
void pi_signal_senders_name(struct pi_signal_senders *out);

#endif
