/*
 * control_protocol.h - what `profinject ctl` and the library agree on to
 * reach a running process: its control socket, and where that cannot be
 * reached (another mount namespace) a real-time signal, sent only to a
 * process whose control thread says the handler for it is the library's.
 */
#ifndef PROFINJECT_CONTROL_PROTOCOL_H
#define PROFINJECT_CONTROL_PROTOCOL_H

/* The fallback signal, SIGRTMIN + this: sigqueue() it with value 1 to start, 2 to stop. */
#define PI_CONTROL_SIGNAL_OFFSET 7
#define PI_CONTROL_SIGNAL_START 1
#define PI_CONTROL_SIGNAL_STOP 2

/* The name of the library's control thread (/proc/PID/task/TID/comm): with
 * the handler of the fallback signal installed by the library, and without
 * (the application handles that signal itself: it is never sent). */
#define PI_CONTROL_THREAD_SIGNAL "pi-control-sig"
#define PI_CONTROL_THREAD "pi-control"

/* Recording ends at this CLOCK_MONOTONIC time, in nanoseconds, in every
 * process started with it in its environment (`profinject run --duration`):
 * one started later records nothing, one running then closes its window
 * itself; no signal, no socket needed. */
#define PI_RECORD_UNTIL_ENV "PROFINJECT_RECORD_UNTIL_NS"

/* A process's control socket: CONTROL_DIR/<pid>.<pid namespace inode>.sock,
 * pid as the process sees it, so that processes of several PID namespaces
 * (containers each with a pid 1) can share one directory. */
#define PI_CONTROL_SOCKET_FORMAT "%s/%d.%llu.sock"
/* A control directory that starts with '@' names the abstract socket
 * namespace instead of a directory: no file is made (a container's file
 * system is left as it was), the socket is reachable from the process's
 * network namespace only, and the SO_PEERCRED check is the only gate.
 * `profinject attach` sets it for a process in other namespaces. */
#define PI_CONTROL_ABSTRACT_DIR "@profinject"

/* The longest control directory whose socket paths fit in sun_path (108
 * bytes with its NUL): the longest pid and inode leave this much. */
#define PI_CONTROL_DIR_MAX (108 - sizeof("/2147483647.18446744073709551615.sock"))

#endif
