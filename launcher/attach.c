/*
 * attach.c - loading the library into a running process: its C library's
 * functions called from one of its threads stopped at a safe point
 * (safe_point.h, remote_call.h, target_libc.h).
 */
#define _GNU_SOURCE
#include "attach.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "namespaces.h"
#include "output_handoff.h"
#include "proc_maps.h"
#include "profinject/attach_protocol.h"
#include "profinject/control_protocol.h"
#include "remote_call.h"
#include "safe_point.h"
#include "target_libc.h"

/* how long to look for a moment when the main thread holds no C library lock, before
 * looking for another thread that waits, and after: a thread inside malloc much of the
 * time, on a loaded machine, can take seconds to find outside it */
#define SAFE_POINT_FIRST_MS 300
#define SAFE_POINT_TIMEOUT_MS 10000

/* Does @pid see the file @path of ours at the same path? */
static int sees_same_file(pid_t pid, const char *path)
{
    char theirs[4200];
    struct stat a, b;
    snprintf(theirs, sizeof(theirs), "/proc/%d/root%s", (int)pid, path);
    return stat(path, &a) == 0 && stat(theirs, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

static void explain_ptrace_refusal(pid_t pid, int error)
{
    if (error == ESRCH) {
        fprintf(stderr, "profinject: no process %d\n", (int)pid);
        return;
    }
    fprintf(stderr, "profinject: cannot trace process %d: %s\n", (int)pid, strerror(error));
    if (error != EPERM)
        return;
    FILE *scope = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int value = -1;
    if (scope) {
        if (fscanf(scope, "%d", &value) != 1)
            value = -1;
        fclose(scope);
    }
    char scope_text[64] = "no Yama module here";
    if (value >= 0)
        snprintf(scope_text, sizeof(scope_text), "it is %d here", value);
    fprintf(stderr, "  attaching needs CAP_SYS_PTRACE (docker run --cap-add SYS_PTRACE), "
                    "or the same user with kernel.yama.ptrace_scope=0 (%s: "
                    "sysctl kernel.yama.ptrace_scope=0)\n", scope_text);
}

/* Whether a seccomp filter confines @pid: the likely reason a call it makes is refused. */
static int under_seccomp_filter(pid_t pid)
{
    char mode[16];
    return pi_status_field((int)pid, "Seccomp", mode, sizeof(mode)) == 0 && atoi(mode) == 2;
}

/* Copy our @library into a memfd of @pid: its path there, or -1 (said why). */
static int copy_into_memfd(pid_t pid, const struct user_regs_struct *at,
                           const struct pi_target_libc *libc, const char *library, int *remote_fd,
                           char *path, size_t size)
{
    uint64_t result = 0;
    struct pi_remote_arg args[3] = {PI_TEXT("libprofinject.so"), PI_NUMBER(1 /* MFD_CLOEXEC */),
                                    PI_NUMBER(0)};
    if (pi_remote_call(pid, at, libc->memfd_create, args, &result) != 0)
        return -1;
    *remote_fd = (int)result;
    if (*remote_fd < 0) {
        fprintf(stderr, "profinject: process %d could not make an in-memory file "
                        "(memfd_create)%s\n", (int)pid,
                under_seccomp_filter(pid) ? ": its seccomp filter refuses it (Seccomp: 2 in "
                                            "/proc/PID/status; docker run --security-opt "
                                            "seccomp=... allowing memfd_create)" : "");
        return -1;
    }
    char fd_path[64];
    snprintf(fd_path, sizeof(fd_path), "/proc/%d/fd/%d", (int)pid, *remote_fd);
    int in = open(library, O_RDONLY | O_CLOEXEC), out = open(fd_path, O_WRONLY | O_CLOEXEC);
    char buf[65536];
    ssize_t n = 0;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n) {
            n = -1;
            break;
        }
    int failed = in < 0 || out < 0 || n < 0;
    if (failed)
        fprintf(stderr, "profinject: cannot copy %s into process %d: %s\n", library, (int)pid,
                strerror(errno));
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        failed = 1;
    /* the process's own view of it: its /proc, in its PID namespace */
    snprintf(path, size, "/proc/self/fd/%d", *remote_fd);
    return failed ? -1 : 0;
}

/* What the process's loader said, read from its memory: @out, "" when unknown. */
static void remote_dlerror(pid_t pid, const struct user_regs_struct *at,
                           const struct pi_target_libc *libc, char *out, size_t size)
{
    uint64_t text = 0;
    struct pi_remote_arg none[3] = {PI_NUMBER(0), PI_NUMBER(0), PI_NUMBER(0)};
    out[0] = '\0';
    if (!libc->dlerror || pi_remote_call(pid, at, libc->dlerror, none, &text) != 0 || !text)
        return;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    int mem = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = mem >= 0 ? pread(mem, out, size - 1, (off_t)text) : -1;
    out[n > 0 ? n : 0] = '\0';

    if (mem >= 0)
        close(mem);
}

/* What the process needs to find: settings, then the library. */
struct plan {
    const char *library;
    int memfd;                /* copy the library into memory first */
    struct pi_handoff handoff; /* output by descriptor, when name[0] */
    const char *output;
    int abstract_control;
};

static int call_setenv(pid_t pid, const struct user_regs_struct *at,
                       const struct pi_target_libc *libc, const char *name, const char *value)
{
    uint64_t result = 0;
    struct pi_remote_arg args[3] = {PI_TEXT(name), PI_TEXT(value), PI_NUMBER(1)};
    return pi_remote_call(pid, at, libc->setenv, args, &result) == 0 && result == 0 ? 0 : -1;
}

static void explain_load_failure(pid_t pid, const struct user_regs_struct *at,
                                 const struct pi_target_libc *libc, const struct plan *plan)
{
    char why[512];
    remote_dlerror(pid, at, libc, why, sizeof(why));
    fprintf(stderr, "profinject: process %d could not load %s: %s%s\n", (int)pid, plan->library,
            why[0] ? why : "its loader did not say why",
            plan->memfd ? " (it loads it from its own /proc, which must be mounted)" : "");
}

/* The calls inside the stopped process. 0, or -1 (said why). */
static int load_inside(pid_t pid, const struct user_regs_struct *at,
                       const struct pi_target_libc *libc, struct plan *plan)
{
    if (call_setenv(pid, at, libc, "PROFINJECT_ATTACHED", "1") ||
        (plan->output && call_setenv(pid, at, libc, "PROFINJECT_OUTPUT", plan->output)) ||
        (plan->handoff.name[0] &&
         call_setenv(pid, at, libc, PI_OUTPUT_HANDOFF_ENV, plan->handoff.name)) ||
        (plan->abstract_control &&
         call_setenv(pid, at, libc, "PROFINJECT_CONTROL_DIR", PI_CONTROL_ABSTRACT_DIR))) {
        fprintf(stderr, "profinject: the call of setenv inside process %d failed\n", (int)pid);
        return -1;
    }
    char path[4096];
    int remote_fd = -1;
    snprintf(path, sizeof(path), "%s", plan->library);
    if (plan->memfd && copy_into_memfd(pid, at, libc, plan->library, &remote_fd, path,
                                       sizeof(path)) != 0)
        return -1;
    uint64_t handle = 0, ignored;
    struct pi_remote_arg args[3] = {PI_TEXT(path),
                                    PI_NUMBER(RTLD_NOW | RTLD_GLOBAL | libc->dlopen_mode_extra),
                                    PI_NUMBER(0)};
    int failed = pi_remote_call(pid, at, libc->dlopen, args, &handle) != 0;
    if (failed)
        fprintf(stderr, "profinject: the call of dlopen inside process %d did not return\n",
                (int)pid);
    else if (handle == 0)
        explain_load_failure(pid, at, libc, plan);
    struct pi_remote_arg close_args[3] = {PI_NUMBER(remote_fd), PI_NUMBER(0), PI_NUMBER(0)};
    if (remote_fd >= 0 && !failed)
        pi_remote_call(pid, at, libc->close, close_args, &ignored); /* the mapping stays */
    return failed || handle == 0 ? -1 : 0;
}

int pi_attach(pid_t pid, const char *library, const char *output)
{
    /* the right to trace first: without it nothing else about the process can be read */
    if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) != 0) {
        explain_ptrace_refusal(pid, errno);
        return -1;
    }
    struct pi_target_libc libc;
    struct plan plan = {.library = library, .output = output};
    plan.handoff.listen_fd = plan.handoff.dir_fd = -1;
    int contained = !pi_same_namespace(pid, "mnt") || !pi_same_namespace(pid, "pid") ||
                    !sees_same_file(pid, "/");
    if (contained) {
        plan.memfd = !sees_same_file(pid, library);
        plan.abstract_control = 1;
    }
    if (pi_target_libc(pid, &libc) != 0 ||
        (contained && pi_handoff_prepare(&plan.handoff, pid, output) != 0)) {
        ptrace(PTRACE_DETACH, pid, NULL, NULL);
        return -1;
    }
    static struct pi_saved_registers saved;
    int failed = 1;
    /* the main thread, where it holds no lock; else a thread blocked in a wait (the
     * main thread runs on meanwhile); else the main thread for the rest of the time */
    pid_t tid = pid;
    int stopped = pi_stop_at_safe_point(pid, SAFE_POINT_FIRST_MS, &saved.general) == 0;
    if (!stopped && (tid = pi_other_thread_at_safe_point(pid, &saved.general)) > 0)
        stopped = 1;
    else if (!stopped)
        stopped = pi_stop_at_safe_point(tid = pid, SAFE_POINT_TIMEOUT_MS, &saved.general) == 0;
    if (!stopped) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            fprintf(stderr, "profinject: process %d ended before it could be stopped outside "
                            "the C library\n", (int)pid);
        else
            fprintf(stderr, "profinject: process %d did not stop outside the C library and the "
                            "loader within %d ms, and no other thread of it was waiting (a call "
                            "made there could deadlock it); try again\n",
                    (int)pid, SAFE_POINT_FIRST_MS + SAFE_POINT_TIMEOUT_MS);
    } else if (pi_save_extended_registers(tid, &saved) != 0) {
        fprintf(stderr, "profinject: cannot read the registers of process %d\n", (int)pid);
        pi_restore_registers(tid, &saved);
    } else {
        failed = load_inside(tid, &saved.general, &libc, &plan) != 0;
        pi_restore_registers(tid, &saved);
    }
    ptrace(PTRACE_DETACH, tid, NULL, NULL);
    pi_send_held_signals(pid, tid);
    if (tid != pid) { /* the main thread, seized but running: stopped only to be let go */
        int status;
        if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) == 0)
            waitpid(pid, &status, __WALL);
        ptrace(PTRACE_DETACH, pid, NULL, NULL);
    }
    if (plan.handoff.name[0] && !pi_handoff_finish(&plan.handoff) && !failed) {
        fprintf(stderr, "profinject: process %d loaded the profiler but did not take its output "
                        "directory: it records nothing (its stderr says why)\n", (int)pid);
        failed = 1;
    }
    return failed ? -1 : 0;
}
