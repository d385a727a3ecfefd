/*
 * safe_point.c - see safe_point.h. Where the thread stands is read from
 * its instruction pointer (which file's code, from /proc/PID/maps) and,
 * when it is in a system call, which call. Code of its own program or
 * libraries is safe; the loader and the unwinder (which runs under the
 * loader's lock) are not; inside the C library only blocking waits are,
 * since malloc, stdio and the rest take their locks there.
 */
#define _GNU_SOURCE
#include "safe_point.h"
#include "proc_maps.h"

#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>

/* System calls a thread blocks in while holding none of the C library's locks. */
static int waiting_call(long number)
{
    static const long waits[] = {
        SYS_read,          SYS_write,      SYS_poll,          SYS_select,     SYS_sched_yield,
        SYS_pause,         SYS_nanosleep,  SYS_accept,        SYS_recvfrom,   SYS_recvmsg,
        SYS_wait4,         SYS_rt_sigtimedwait, SYS_rt_sigsuspend, SYS_futex, SYS_clock_nanosleep,
        SYS_epoll_wait,    SYS_waitid,     SYS_pselect6,      SYS_ppoll,      SYS_epoll_pwait,
        SYS_accept4,       SYS_recvmmsg,
    };
    for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
        if (waits[i] == number)
            return 1;
    return 0;
}

enum place { OWN_CODE, C_LIBRARY, LOADER };

static int contains(const struct pi_mapping *m, const void *address)
{
    return (uintptr_t)address >= m->start && (uintptr_t)address < m->end;
}

/* Whose code @address is in, by the file mapped there in @pid. */
static enum place place_of(pid_t pid, uintptr_t address)
{
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct pi_mapping m;
    if (pi_find_mapping(pid_text, contains, (const void *)address, &m) != 0)
        return LOADER; /* unreadable: assume the worst */
    const char *name = pi_mapping_name(&m);
    if (strncmp(name, "ld-linux", 8) == 0 || strncmp(name, "ld-2.", 5) == 0 ||
        strncmp(name, "libgcc_s", 8) == 0)
        return LOADER;
    if (strncmp(name, "libc.so", 7) == 0 || strncmp(name, "libc-2.", 7) == 0 ||
        strncmp(name, "libpthread", 10) == 0)
        return C_LIBRARY;
    return OWN_CODE;
}

static int safe_to_call(pid_t pid, const struct user_regs_struct *regs)
{
    switch (place_of(pid, regs->rip)) {
    case OWN_CODE: return 1;
    case C_LIBRARY: return (long)regs->orig_rax >= 0 && waiting_call((long)regs->orig_rax);
    default: return 0;
    }
}

/* Wait for the stop PTRACE_INTERRUPT asked for, delivering any signal that comes first. */
static int wait_for_interrupt(pid_t pid)
{
    for (;;) {
        int status;
        if (waitpid(pid, &status, __WALL) < 0 || !WIFSTOPPED(status))
            return -1;
        if (status >> 16 == PTRACE_EVENT_STOP)
            return 0;
        /* a signal-delivery stop: let the signal through, the interrupt is still due */
        if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status)) != 0)
            return -1;
    }
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int pi_stop_at_safe_point(pid_t pid, unsigned timeout_ms, struct user_regs_struct *regs)
{
    /* by the clock, not by attempts: on a loaded machine the process may not run at all
     * between two attempts; the pauses vary (0.5 to 1.5 ms) so that they do not keep
     * falling on the same phase of a loop */
    uint64_t deadline = now_ms() + timeout_ms, random = (uint64_t)pid * 2654435761u | 1;
    for (;;) {
        if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) != 0 || wait_for_interrupt(pid) != 0 ||
            ptrace(PTRACE_GETREGS, pid, NULL, regs) != 0)
            return -1;
        if (safe_to_call(pid, regs))
            return 0;
        if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || now_ms() >= deadline)
            return -1;
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        struct timespec pause = {0, 500000 + (long)(random % 1000000)};
        nanosleep(&pause, NULL);
    }
}
