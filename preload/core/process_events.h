/*
 * process_events.h - moments of a process's life that parts of the library
 * outside the core must hear about: a fork child starting, an exec about to
 * replace the image, the process ending, a capture window closing.
 *
 * The core owns the fork, exec and exit paths but knows nothing of the
 * control socket or GPU timing; each part subscribes when it starts, so
 * the core calls them through this table and never by name.
 */
#ifndef PI_PROCESS_EVENTS_H
#define PI_PROCESS_EVENTS_H

enum pi_process_event {
    PI_EVENT_FORK_CHILD,  /* in the child, before the application's code resumes */
    PI_EVENT_BEFORE_EXEC, /* the image is about to go: write out what is pending */
    PI_EVENT_END,         /* exit or _exit: the trace is about to close */
    PI_EVENT_WINDOW_CLOSING, /* a capture window is about to close: write out what is pending */
    PI_EVENT_SETTLED, /* the writer's first flush, at most 100 ms in: what a short-lived
                         process never needs (the control socket) starts here, on the writer */
    PI_EVENT_DYING,   /* a signal's default action is about to end the process (after the
                         trace is out): async-signal-safe handlers only (remove the socket) */
    PI_EVENT_EXEC_FAILED, /* an exec announced by PI_EVENT_BEFORE_EXEC returned: the image
                             goes on */
    PI_EVENT_FATAL_SIGNAL, /* a signal's default action is about to end the process, before
                              its end record: last records only, async-signal-safe */
    PI_EVENT_FATAL_FRAMES, /* the same, once the trace is out: the frames of the thread that
                              got it (pi_fatal_signal_moment), which may fault on a broken
                              stack; async-signal-safe, its records flushed after it */
    PI_EVENT_COUNT
};

/**
 * pi_process_event_subscribe - have @handler called at every @event
 * @event: which moment
 * @handler: called with the guard held, in subscription order; subscribing
 *           the same handler twice keeps one
 *
 * Return: 0, or -1 when the table is full (the handler is not called).
 */
int pi_process_event_subscribe(enum pi_process_event event, void (*handler)(void));

/* pi_process_event_notify - call @event's handlers (the core's fork, exec and exit paths) */
void pi_process_event_notify(enum pi_process_event event);

#endif
