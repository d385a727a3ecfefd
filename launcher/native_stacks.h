/*
 * native_stacks.h - the native frames of a running process's threads, read
 * from outside it: each thread is stopped (ptrace) only while its own frames
 * are walked (libdw's unwinder, from its modules' call frame information),
 * and the frames are named once it runs on, as the reports name native
 * frames. A stop through ptrace restarts the system call it interrupts, so
 * the thread's waits end as they would have; a signal would not.
 */
#ifndef PI_LAUNCHER_NATIVE_STACKS_H
#define PI_LAUNCHER_NATIVE_STACKS_H

/**
 * pi_native_stacks_print - print the native frames of @pid's threads that
 * @reply (the process's answer to "stacks") lists without Python frames, or
 * with @every_thread of each thread, the profiler's own left out; with the
 * longest time one of them was stopped for it.
 */
void pi_native_stacks_print(int pid, const char *reply, int every_thread);

#endif
