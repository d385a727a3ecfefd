/*
 * safe_point.h - stopping a thread of another process where making it call
 * into the C library cannot deadlock. A thread stopped inside malloc holds
 * the arena lock; one inside the dynamic loader holds its lock; a remote
 * dlopen from there waits for itself forever.
 */
#ifndef PI_LAUNCHER_SAFE_POINT_H
#define PI_LAUNCHER_SAFE_POINT_H

#include <sys/types.h>
#include <sys/user.h>

/**
 * pi_stop_at_safe_point - stop @pid (already seized) where it holds no
 * lock of the C library or the loader that we can see: in its own code,
 * or blocked in a waiting system call. Stopped elsewhere, it runs on for a
 * millisecond and is stopped again, for up to @timeout_ms. Signals that
 * arrive meanwhile are delivered.
 * Return: 0 with the thread stopped and its registers in @regs; -1 (the
 * thread is left running).
 */
int pi_stop_at_safe_point(pid_t pid, unsigned timeout_ms, struct user_regs_struct *regs);

/**
 * pi_other_thread_at_safe_point - another thread of process @pid (its main
 * thread seized, and left running) that is blocked in a waiting system call:
 * seized and stopped there, with its registers in @regs. A call made in it
 * that needs a lock the main thread holds waits until the main thread,
 * which runs on, lets it go: the way in for a main thread that is inside
 * malloc most of the time.
 * Return: its tid, or -1 when no thread is waiting (none is left seized).
 */
pid_t pi_other_thread_at_safe_point(pid_t pid, struct user_regs_struct *regs);

/**
 * pi_wait_for_interrupt - wait for the stop PTRACE_INTERRUPT asked of @pid
 * (seized), delivering any signal that arrives first
 * Return: 0 with it stopped, -1 when it is gone or not stopped.
 */
int pi_wait_for_interrupt(pid_t pid);

#endif
