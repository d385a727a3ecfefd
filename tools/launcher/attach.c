/*
 * attach.c - calls made inside another process with ptrace (x86-64).
 *
 * The main thread is stopped, its registers saved, and pointed at a libc
 * function with its arguments; its return address is 0, so the call ends
 * in a fault we catch, the result is in rax, and the registers go back as
 * they were: the general ones and the whole extended state (x87, SSE, AVX,
 * AVX-512), since the thread may have been stopped in the middle of a
 * computation whose vector registers the called code would overwrite. An
 * interrupted system call restarts as it would have.
 * Functions are found by their offset in our own libc, which must be the
 * same file as the target's (checked by device and inode).
 */
#define _GNU_SOURCE
#include "attach.h"
#include "proc_maps.h"
#include "safe_point.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* how long to look for a moment when the thread holds no C library lock */
#define SAFE_POINT_TIMEOUT_MS 2000

/* The C library's first mapping (file offset 0), which is where it is loaded. */
static int is_libc_start(const struct pi_mapping *m, const void *unused)
{
    (void)unused;
    return m->offset == 0 && strchr(m->path, '/') &&
           strncmp(pi_mapping_name(m), "libc.so", 7) == 0;
}

/* The load address (offset 0 mapping) of libc in @pid ("self" for us). */
static int find_libc(const char *pid, struct pi_mapping *lib)
{
    return pi_find_mapping(pid, is_libc_start, NULL, lib);
}

/* @name as libc defines it (not as an interposer in front of it does) */
static uintptr_t libc_function(const char *name, const struct pi_mapping *libc)
{
    void *handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *function = handle ? dlsym(handle, name) : NULL;
    Dl_info where;
    if (!function || !dladdr(function, &where) || (uintptr_t)where.dli_fbase != libc->start)
        return 0;
    return (uintptr_t)function;
}

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

static void send_held_signals(pid_t pid)
{
    for (int i = 0; i < held_count; i++)
        syscall(SYS_tgkill, pid, pid, held_signals[i]);
    held_count = 0;
}

/* Call @function(a, b, c) in @pid, whose registers are @saved; strings
 * @s1 and @s2 are copied below the red zone and passed where a, b say -1. */
static int remote_call(pid_t pid, const struct user_regs_struct *saved, uintptr_t function,
                       const char *s1, const char *s2, uint64_t c, uint64_t *result)
{
    struct user_regs_struct regs = *saved;
    uintptr_t sp = (saved->rsp - 128 - 8192) & ~(uintptr_t)15; /* past the red zone */
    uintptr_t p1 = sp + 64, p2 = p1 + 4096;
    uint64_t zero = 0;
    if (poke_bytes(pid, p1, s1, strlen(s1) + 1) || (s2 && poke_bytes(pid, p2, s2, strlen(s2) + 1)) ||
        poke_bytes(pid, sp - 8, &zero, sizeof(zero)))
        return -1;
    /* as if called: return address 0 pushed, so the call ends in a fault we
     * catch, and rsp 8 past a 16-byte boundary as the ABI wants at entry */
    regs.rsp = sp - 8;
    regs.rip = function;
    regs.rdi = p1;
    regs.rsi = s2 ? p2 : c;
    regs.rdx = c;
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

/* The thread's registers, general and extended. */
struct saved_registers {
    struct user_regs_struct general;
    struct iovec extended;  /* XSAVE area, or the legacy FXSAVE one */
    int extended_is_xstate; /* 1: NT_X86_XSTATE, 0: PTRACE_GETFPREGS, -1: none saved */
    unsigned char area[16384]; /* XSAVE with AVX-512 needs under 3 KiB; room to spare */
};

/* The extended state of @pid, whose general registers are already in @r. */
static int save_registers(pid_t pid, struct saved_registers *r)
{
    r->extended = (struct iovec){r->area, sizeof(r->area)};
    if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &r->extended) == 0) {
        r->extended_is_xstate = 1;
        return 0;
    }
    r->extended = (struct iovec){r->area, sizeof(struct user_fpregs_struct)};
    r->extended_is_xstate = ptrace(PTRACE_GETFPREGS, pid, NULL, r->area) == 0 ? 0 : -1;
    return r->extended_is_xstate < 0 ? -1 : 0; /* without it, a remote call is not safe */
}

static void restore_registers(pid_t pid, struct saved_registers *r)
{
    if (r->extended_is_xstate == 1)
        ptrace(PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE, &r->extended);
    else if (r->extended_is_xstate == 0)
        ptrace(PTRACE_SETFPREGS, pid, NULL, r->area);
    ptrace(PTRACE_SETREGS, pid, NULL, &r->general);
}

int pi_attach(pid_t pid, const char *library, const char *output)
{
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct pi_mapping ours, theirs;
    if (find_libc("self", &ours) != 0 || find_libc(pid_text, &theirs) != 0) {
        fprintf(stderr, "profinject: cannot read the memory map of %d (does it exist, and is it "
                        "yours?)\n", (int)pid);
        return -1;
    }
    if (ours.inode != theirs.inode || strcmp(ours.device, theirs.device) != 0) {
        fprintf(stderr, "profinject: process %d uses another libc than this launcher (a "
                        "container?): run the launcher inside its mount namespace\n", (int)pid);
        return -1;
    }
    uintptr_t set_env = libc_function("setenv", &ours), load = libc_function("dlopen", &ours);
    if (!set_env || !load) {
        fprintf(stderr, "profinject: setenv or dlopen not found in libc\n");
        return -1;
    }
    set_env = set_env - ours.start + theirs.start;
    load = load - ours.start + theirs.start;
    if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) != 0) {
        int e = errno;
        fprintf(stderr, "profinject: cannot trace process %d: %s\n", (int)pid, strerror(e));
        if (e == EPERM) {
            FILE *scope = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
            int value = 0;
            if (scope) {
                if (fscanf(scope, "%d", &value) != 1)
                    value = 0;
                fclose(scope);
            }
            fprintf(stderr, "  attaching needs CAP_SYS_PTRACE (docker run --cap-add SYS_PTRACE), "
                            "or the same user with kernel.yama.ptrace_scope=0 (it is %d here: "
                            "sysctl kernel.yama.ptrace_scope=0)\n", value);
        }
        return -1;
    }
    int failed = 0;
    static struct saved_registers saved;
    uint64_t result = 0;
    if (pi_stop_at_safe_point(pid, SAFE_POINT_TIMEOUT_MS, &saved.general) != 0) {
        fprintf(stderr, "profinject: process %d did not stop outside the C library and the "
                        "loader within %d ms (a call made there could deadlock it); try again\n",
                (int)pid, SAFE_POINT_TIMEOUT_MS);
        ptrace(PTRACE_DETACH, pid, NULL, NULL);
        return -1;
    }
    if (save_registers(pid, &saved) != 0) {
        fprintf(stderr, "profinject: cannot read the registers of process %d\n", (int)pid);
        ptrace(PTRACE_DETACH, pid, NULL, NULL);
        return -1;
    }
    const struct user_regs_struct *at = &saved.general;
    if (remote_call(pid, at, set_env, "PROFINJECT_ATTACHED", "1", 1, &result) != 0 ||
        (output && remote_call(pid, at, set_env, "PROFINJECT_OUTPUT", output, 1, &result)) ||
        remote_call(pid, at, load, library, NULL, RTLD_NOW | RTLD_GLOBAL, &result) != 0) {
        fprintf(stderr, "profinject: the call inside process %d failed\n", (int)pid);
        failed = 1;
    } else if (result == 0) {
        fprintf(stderr, "profinject: process %d could not load %s (its stderr says why)\n",
                (int)pid, library);
        failed = 1;
    }
    restore_registers(pid, &saved);
    ptrace(PTRACE_DETACH, pid, NULL, NULL);
    send_held_signals(pid);
    return failed ? -1 : 0;
}
