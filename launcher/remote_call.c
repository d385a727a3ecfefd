/* remote_call.c - see remote_call.h. */
#define _GNU_SOURCE
#include "remote_call.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int poke_bytes(pid_t pid, uintptr_t address, const void *data, size_t size)
{
    for (size_t i = 0; i < size; i += sizeof(long)) {
        long word = 0;
        size_t n = size - i < sizeof(long) ? size - i : sizeof(long);
        if (n < sizeof(long)) {
            errno = 0;
            word = ptrace(PTRACE_PEEKDATA, pid, (void *)(address + i), NULL);
            if (errno)
                return -1;
        }
        memcpy(&word, (const char *)data + i, n);
        if (ptrace(PTRACE_POKEDATA, pid, (void *)(address + i), (void *)word) != 0)
            return -1;
    }
    return 0;
}

/* Signals held back during the remote calls, sent again after detaching. */
static int held_signals[16];
static int held_count;

static void keep_for_later(int sig)
{
    for (int i = 0; i < held_count; i++)
        if (held_signals[i] == sig)
            return; /* standard signals do not queue: once is what the kernel would do */
    if (held_count < (int)(sizeof(held_signals) / sizeof(held_signals[0])))
        held_signals[held_count++] = sig;
}

void pi_send_held_signals(pid_t pid, pid_t tid)
{
    for (int i = 0; i < held_count; i++)
        syscall(SYS_tgkill, pid, tid, held_signals[i]);
    held_count = 0;
}

/* Room for each string argument below the stack pointer. */
#define TEXT_ROOM 4096

int pi_remote_call(pid_t pid, const struct user_regs_struct *saved, uintptr_t function,
                   const struct pi_remote_arg args[3], uint64_t *result)
{
    struct user_regs_struct regs = *saved;
    uintptr_t sp = (saved->rsp - 128 - 4 * TEXT_ROOM) & ~(uintptr_t)15; /* past the red zone */
    uint64_t values[3], zero = 0;
    for (int i = 0; i < 3; i++) {
        values[i] = args[i].value;
        if (!args[i].text)
            continue;
        size_t length = strlen(args[i].text) + 1;
        values[i] = sp + 64 + (uintptr_t)i * TEXT_ROOM;
        if (length > TEXT_ROOM - 64 || poke_bytes(pid, values[i], args[i].text, length))
            return -1;
    }
    if (poke_bytes(pid, sp - 8, &zero, sizeof(zero)))
        return -1;
    /* as if called: return address 0 pushed, so the call ends in a fault we
     * catch, and rsp 8 past a 16-byte boundary as the ABI wants at entry */
    regs.rsp = sp - 8;
    regs.rip = function;
    regs.rdi = values[0];
    regs.rsi = values[1];
    regs.rdx = values[2];
    regs.rax = 0;
    regs.orig_rax = (unsigned long long)-1; /* no system call restart on resume */
    if (ptrace(PTRACE_SETREGS, pid, NULL, &regs) != 0 || ptrace(PTRACE_CONT, pid, NULL, NULL) != 0)
        return -1;
    for (;;) {
        int status;
        if (waitpid(pid, &status, __WALL) < 0)
            return -1;
        if (!WIFSTOPPED(status))
            return -1; /* the process ended */
        int sig = WSTOPSIG(status);
        /* the return to address 0, or a fault of the called code itself */
        if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
            break;
        /* another signal arrived meanwhile: the application's handler must not
         * run inside our call, so it is sent again once we are done */
        if (status >> 16 == 0)
            keep_for_later(sig);
        if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0)
            return -1;
    }
    struct user_regs_struct after;
    if (ptrace(PTRACE_GETREGS, pid, NULL, &after) != 0 || after.rip != 0)
        return -1; /* it faulted elsewhere: the process is left as the fault left it */
    *result = after.rax;
    return 0;
}

int pi_save_extended_registers(pid_t pid, struct pi_saved_registers *r)
{
    r->extended = (struct iovec){r->area, sizeof(r->area)};
    if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &r->extended) == 0) {
        r->extended_is_xstate = 1;
        return 0;
    }
    r->extended = (struct iovec){r->area, sizeof(struct user_fpregs_struct)};
    r->extended_is_xstate = ptrace(PTRACE_GETFPREGS, pid, NULL, r->area) == 0 ? 0 : -1;
    return r->extended_is_xstate < 0 ? -1 : 0;
}

void pi_restore_registers(pid_t pid, struct pi_saved_registers *r)
{
    if (r->extended_is_xstate == 1)
        ptrace(PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE, &r->extended);
    else if (r->extended_is_xstate == 0)
        ptrace(PTRACE_SETFPREGS, pid, NULL, r->area);
    ptrace(PTRACE_SETREGS, pid, NULL, &r->general);
}
