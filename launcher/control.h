/*
 * control.h - reaching the profiler in running processes (ctl, run
 * --duration, attach's detach): each process's control socket, found by the
 * pid it sees and its PID namespace, or where that cannot be reached the
 * fallback signal, only where the library says the handler is its own.
 */
#ifndef PI_LAUNCHER_CONTROL_H
#define PI_LAUNCHER_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

/* The longest wait for one process's answer, in ms (ctl --timeout). */
extern long pi_control_timeout_ms;

/* pi_control_dir - the control directory; exits 2 with a message when its sockets' paths cannot fit */
void pi_control_dir(char *out, size_t size);

/* pi_control_parse_pid - @text as a process id, else 0 with a message for @command */
int pi_control_parse_pid(const char *command, const char *text);

/* pi_control_say_none_answered - on stderr, why no process under the profiler answered at
 * @pid: there is none, or none reached (not profiled, another user's) */
void pi_control_say_none_answered(int pid);

/* pi_runs_profiler - whether libprofinject.so is mapped in @pid */
int pi_runs_profiler(int pid);

/* pi_control_one - send @request to @pid, print its answer; 0 when it answered
 * @fallback_value: PI_CONTROL_SIGNAL_START or _STOP to signal where no socket is reached, or 0 */
int pi_control_one(const char *dir, int pid, const char *request, int fallback_value);

/* pi_control_answered - what to do after a process's answer is printed: @reply is the whole
 * answer of process @pid */
typedef void (*pi_control_answered)(int pid, const char *reply, void *arg);

/* pi_control_one_then - pi_control_one, then @then(@pid, its answer, @arg) where it answered */
int pi_control_one_then(const char *dir, int pid, const char *request, int fallback_value,
                        pi_control_answered then, void *arg);

/* pi_control_ask - send @request to @pid and read its whole answer into @reply (NUL-ended,
 * cut at @size): its length, or -1 when it was not reached (said on stderr where known) */
ssize_t pi_control_ask(const char *dir, int pid, const char *request, char *reply, size_t size);

/* pi_control_collect_tree - @pid and its descendants into @pids from index @n, at most
 * PI_CONTROL_TREE_MAX in all: the new count */
#define PI_CONTROL_TREE_MAX 4096
int pi_control_collect_tree(int pid, int *pids, int n);

/* pi_control_tree - @request to @pid and, with @whole_tree, its descendants; how many answered */
int pi_control_tree(int pid, const char *request, int whole_tree);

/* pi_control_tree_then - pi_control_tree, with @then after each answer (pi_control_one_then) */
int pi_control_tree_then(int pid, const char *request, int whole_tree, pi_control_answered then,
                         void *arg);

#endif
