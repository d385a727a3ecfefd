/*
 * remote_call.h - calls made inside another process with ptrace (x86-64).
 *
 * The thread is stopped (safe_point.h), its registers saved, and pointed at
 * a function with its arguments; its return address is 0, so the call ends
 * in a fault we catch, the result is in rax, and the registers go back as
 * they were: the general ones and the whole extended state (x87, SSE, AVX,
 * AVX-512), since the thread may have been stopped in the middle of a
 * computation whose vector registers the called code would overwrite. An
 * interrupted system call restarts as it would have.
 */
#ifndef PI_LAUNCHER_REMOTE_CALL_H
#define PI_LAUNCHER_REMOTE_CALL_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

/* The thread's registers, general and extended. */
struct pi_saved_registers {
    struct user_regs_struct general;
    struct iovec extended;  /* XSAVE area, or the legacy FXSAVE one */
    int extended_is_xstate; /* 1: NT_X86_XSTATE, 0: PTRACE_GETFPREGS, -1: none saved */
    unsigned char area[16384]; /* XSAVE with AVX-512 needs under 3 KiB; room to spare */
};

/* pi_save_extended_registers - the extended state of @pid, whose general
 * registers are already in @r. Return: 0, or -1 (a remote call is then not safe). */
int pi_save_extended_registers(pid_t pid, struct pi_saved_registers *r);

/* pi_restore_registers - put back what @r holds; pi_send_held_signals then
 * sends thread @tid of @pid the signals that arrived during the calls (held
 * back: the application's handlers must not run inside them), once detached. */
void pi_restore_registers(pid_t pid, struct pi_saved_registers *r);
void pi_send_held_signals(pid_t pid, pid_t tid);

/* One argument: a string (copied into the process's stack) or a number. */
struct pi_remote_arg {
    const char *text;
    uint64_t value;
};
#define PI_TEXT(s) ((struct pi_remote_arg){(s), 0})
#define PI_NUMBER(n) ((struct pi_remote_arg){NULL, (uint64_t)(n)})

/**
 * pi_remote_call - call @function(args[0], args[1], args[2]) in @pid, from
 * the registers in @saved; strings below its red zone
 * Return: 0 with the function's result in @result; -1 when the call did not
 * come back (the process ended, or faulted elsewhere).
 */
int pi_remote_call(pid_t pid, const struct user_regs_struct *saved, uintptr_t function,
                   const struct pi_remote_arg args[3], uint64_t *result);

#endif
