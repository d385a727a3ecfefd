/*
 * thread_cpu_edges.c - every thread's CPU time at an edge of the recording
 * (see thread_cpu_edges.h). The threads are listed from /proc/self/task,
 * not from the recorder's slots: a thread that has recorded nothing yet has
 * no slot, and a window's records may come from it all the same.
 */
#include "thread_cpu_edges.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "background_thread.h"
#include "profinject/trace_format.h"
#include "raw_syscalls.h"
#include "recorder.h"
#include "recorder_internal.h"

/* what getdents64 returns, one entry after another (getdents64(2)) */
struct directory_entry {
    uint64_t inode;
    int64_t next;
    unsigned short length;
    unsigned char type;
    char name[];
};

static uint32_t tid_of(const char *name)
{
    uint32_t tid = 0;
    for (; *name; name++) {
        if (*name < '0' || *name > '9')
            return 0; /* "." and ".." */
        tid = tid * 10 + (uint32_t)(*name - '0');
    }
    return tid;
}

void pi_thread_cpu_edges(uint64_t ts, unsigned opening)
{
    /* /proc of another PID namespace (a container entered without its own /proc mount)
     * lists other numbers, and a thread's CPU clock is found by the number here */
    if (pi_sys_proc_self_pid() != (int)syscall(SYS_getpid))
        return; /* the analyzer falls back on what the waits leave */
    int fd = pi_sys_open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    char entries[4096] __attribute__((aligned(8)));
    long got;
    while ((got = syscall(SYS_getdents64, fd, entries, sizeof(entries))) > 0)
        for (long at = 0; at < got;) {
            const struct directory_entry *e = (const void *)(entries + at);
            uint32_t tid = tid_of(e->name);
            if (tid && !pi_background_thread_is_ours(tid)) /* the profiler's are not the job's */
                pi_emit_while_paused(PI_REC_THREAD_CPU, 0, ts, 0, pi_thread_cpu_in_trace(tid),
                                     opening, tid);
            at += e->length;
        }
    pi_sys_close(fd);
}
