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

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
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

int pi_wait_for_interrupt(pid_t pid)
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
    /* by the clock, not by attempts. The pauses between attempts grow from 1 ms to 16 ms
     * (each drawn from half to one and a half of that): on a loaded machine a thread let
     * go for 1 ms may not have run at all, and would be found again where it was; and
     * they vary, so that they do not keep falling on the same phase of a loop */
    uint64_t deadline = now_ms() + timeout_ms, random = (uint64_t)pid * 2654435761u | 1;
    for (unsigned attempt = 0;; attempt++) {
        if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) != 0 || pi_wait_for_interrupt(pid) != 0 ||
            ptrace(PTRACE_GETREGS, pid, NULL, regs) != 0)
            return -1;
        if (safe_to_call(pid, regs))
            return 0;
        if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || now_ms() >= deadline)
            return -1;
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        long step_ns = 1000000L << (attempt / 32 < 4 ? attempt / 32 : 4);
        long ns = step_ns / 2 + (long)(random % (uint64_t)step_ns);
        struct timespec pause = {ns / 1000000000L, ns % 1000000000L};
        nanosleep(&pause, NULL);
    }
}

/* The system call thread @tid of @pid is blocked in (/proc/PID/task/TID/syscall), -1: none. */
static long blocked_in(pid_t pid, pid_t tid)
{
    char path[96], text[64] = "";
    snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
    FILE *f = fopen(path, "r");
    long number = -1;
    if (f && fgets(text, sizeof(text), f) && sscanf(text, "%ld", &number) != 1)
        number = -1;
    if (f)
        fclose(f);
    return number;
}

pid_t pi_other_thread_at_safe_point(pid_t pid, struct user_regs_struct *regs)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    struct dirent *e;
    pid_t found = -1;
    while (tasks && found < 0 && (e = readdir(tasks))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == pid || !waiting_call(blocked_in(pid, tid)))
            continue;
        if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0)
            continue;
        /* it may have woken since: only where it is stopped counts */
        if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == 0 && pi_wait_for_interrupt(tid) == 0 &&
            ptrace(PTRACE_GETREGS, tid, NULL, regs) == 0 && safe_to_call(pid, regs)) {
            found = tid;
            break;
        }
        ptrace(PTRACE_DETACH, tid, NULL, NULL);
    }
    if (tasks)
        closedir(tasks);
    return found;
}
