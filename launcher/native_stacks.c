/* native_stacks.c - see native_stacks.h. */
#define _GNU_SOURCE
#include "native_stacks.h"

#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc_maps.h"
#include "safe_point.h"
#include "terminal_text.h"

#define MAX_FRAMES 48
#define MAX_THREADS 1024

struct thread_frames {
    pid_t tid;         /* as this side numbers it: what ptrace takes */
    pid_t inner_tid;   /* as the process numbers it (its PID namespace's): what its answer says */
    int count;
    double stopped_ms; /* -1: not stopped */
    Dwarf_Addr pcs[MAX_FRAMES];
    unsigned char activation[MAX_FRAMES]; /* the pc is where it stands, not a return address */
};

/* The tids @reply names: "thread NAME (tid N):" runs Python; "(tid N, the profiler's)" is ours. */
static void listed_tids(const char *reply, pid_t *python, int *python_count, pid_t *ours,
                        int *our_count)
{
    *python_count = *our_count = 0;
    for (const char *at = reply; (at = strstr(at, "(tid ")) != NULL;) {
        char *end;
        long tid = strtol(at + 5, &end, 10);
        at = end;
        if (strncmp(end, "):\n", 3) == 0 && *python_count < MAX_THREADS)
            python[(*python_count)++] = (pid_t)tid;
        else if (strncmp(end, ", the profiler's)", 17) == 0 && *our_count < MAX_THREADS)
            ours[(*our_count)++] = (pid_t)tid;
    }
}

static int among(pid_t tid, const pid_t *tids, int count)
{
    for (int i = 0; i < count; i++)
        if (tids[i] == tid)
            return 1;
    return 0;
}

/* A module's file is the one the process mapped, which the path its maps give need not
 * name here: in a container they give a path that may lead nowhere, or to the host's file
 * of that name. So the file is opened through the mapping itself where this process may
 * (/proc/PID/map_files: root), else through the process's root, else as named, and kept
 * only when its inode is the mapping's. */
static int target_pid;

static int same_path(const struct pi_mapping *m, const void *path)
{
    return strcmp(m->path, path) == 0;
}

static int open_mapped(const struct pi_mapping *m, const char *path, char *opened, size_t size)
{
    char candidates[3][4200];
    snprintf(candidates[0], sizeof(candidates[0]), "/proc/%d/map_files/%lx-%lx", target_pid,
             (unsigned long)m->start, (unsigned long)m->end);
    snprintf(candidates[1], sizeof(candidates[1]), "/proc/%d/root%s", target_pid, path);
    snprintf(candidates[2], sizeof(candidates[2]), "%s", path);
    for (int i = 0; i < 3; i++) {
        int fd = open(candidates[i], O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == m->inode) {
            snprintf(opened, size, "%s", candidates[i]);
            return fd;
        }
        if (fd >= 0)
            close(fd);
    }
    return -1;
}

static int find_elf_mapped(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                           char **file_name, Elf **elfp)
{
    char pid[16], opened[4200];
    struct pi_mapping mapping;
    snprintf(pid, sizeof(pid), "%d", target_pid);
    if (name[0] == '/' && pi_find_mapping(pid, same_path, name, &mapping) == 0) {
        int fd = open_mapped(&mapping, name, opened, sizeof(opened));
        if (fd >= 0) {
            *file_name = strdup(opened);
            return fd;
        }
    }
    /* the vDSO, and what libdw finds in the process's memory */
    return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf_mapped,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static int take_frame(Dwfl_Frame *frame, void *arg)
{
    struct thread_frames *t = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(frame, &pc, &activation) || t->count >= MAX_FRAMES)
        return DWARF_CB_ABORT;
    t->activation[t->count] = activation;
    t->pcs[t->count++] = pc;
    return DWARF_CB_OK;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* @t's frames, the thread stopped only meanwhile: how long, or -1 with errno */
static double walk(Dwfl *dwfl, struct thread_frames *t)
{
    if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) != 0)
        return -1;
    double stopped = -1;
    if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == 0 && pi_wait_for_interrupt(t->tid) == 0) {
        double start = now_ms();
        dwfl_getthread_frames(dwfl, t->tid, take_frame, t); /* as far as it gets */
        stopped = now_ms() - start;
    }
    int saved = errno;
    ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
    errno = saved;
    return stopped;
}

/* "function+0xOFFSET (module)", as call_sites.c names a native frame */
static void print_frame(Dwfl *dwfl, Dwarf_Addr pc, int activation)
{
    /* a return address names the call before it */
    Dwarf_Addr looked_up = activation ? pc : pc - 1;
    Dwfl_Module *module = dwfl_addrmodule(dwfl, looked_up);
    Dwarf_Addr start = 0;
    const char *path = module ? dwfl_module_info(module, NULL, &start, NULL, NULL, NULL, NULL,
                                                 NULL)
                              : NULL;
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path ? path : "?";
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char *name = module ? dwfl_module_addrinfo(module, looked_up, &offset, &symbol, NULL,
                                                     NULL, NULL)
                              : NULL;
    char function[512], shown_function[512], shown_module[256];
    snprintf(function, sizeof(function), "%s", name ? name : "");
    function[strcspn(function, "@")] = '\0'; /* clock_nanosleep@GLIBC_2.2.5 */
    pi_shown(shown_module, sizeof(shown_module), base);
    if (function[0])
        printf("      %s+0x%llx (%s)\n", pi_shown(shown_function, sizeof(shown_function), function),
               (unsigned long long)(offset + (pc - looked_up)), shown_module);
    else
        printf("      0x%llx (%s)\n", (unsigned long long)(pc - start), shown_module);
}

static void thread_name(int pid, pid_t tid, char *out, size_t size)
{
    char path[64], name[64] = "?";
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, (int)tid);
    FILE *f = fopen(path, "r");
    if (f && fgets(name, sizeof(name), f))
        name[strcspn(name, "\n")] = '\0';
    if (f)
        fclose(f);
    pi_shown(out, size, name);
}

/* The threads of @pid to walk, into @threads: their count */
static int threads_to_walk(int pid, const char *reply, int every_thread,
                           struct thread_frames *threads)
{
    static pid_t python[MAX_THREADS], ours[MAX_THREADS];
    int python_count, our_count, count = 0;
    listed_tids(reply, python, &python_count, ours, &our_count);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    struct dirent *e;
    while (tasks && (e = readdir(tasks)) && count < MAX_THREADS) {
        pid_t tid = (pid_t)atoi(e->d_name), inner = tid > 0 ? pi_pid_inside(tid) : 0;
        if (tid > 0 && !among(inner, ours, our_count) &&
            (every_thread || !among(inner, python, python_count)))
            threads[count++] = (struct thread_frames){.tid = tid, .inner_tid = inner};
    }
    if (tasks)
        closedir(tasks);
    return count;
}

void pi_native_stacks_print(int pid, const char *reply, int every_thread)
{
    static struct thread_frames threads[MAX_THREADS];
    int count = threads_to_walk(pid, reply, every_thread, threads);
    if (count == 0)
        return;
    target_pid = pid;
    Dwfl *dwfl = dwfl_begin(&callbacks);
    if (!dwfl || dwfl_linux_proc_report(dwfl, pid) != 0 ||
        dwfl_report_end(dwfl, NULL, NULL) != 0 || dwfl_linux_proc_attach(dwfl, pid, true) != 0) {
        printf("  native frames not read: its memory map could not be read (%s)\n",
               dwfl_errmsg(-1));
        dwfl_end(dwfl);
        return;
    }
    int refused = 0;
    for (int i = 0; i < count && !refused; i++) {
        threads[i].stopped_ms = walk(dwfl, &threads[i]);
        refused = threads[i].stopped_ms < 0 && errno == EPERM;
    }
    if (refused) {
        printf("  native frames not read: ptrace refused (another tracer holds it, or this user "
               "may not trace it: CAP_SYS_PTRACE, or kernel.yama.ptrace_scope=0)\n");
    } else {
        printf("  native frames, each thread stopped (ptrace) only while its own were read:\n");
        for (int i = 0; i < count; i++) {
            if (threads[i].stopped_ms < 0 || threads[i].count == 0)
                continue; /* gone meanwhile */
            char name[128];
            thread_name(pid, threads[i].tid, name, sizeof(name));
            printf("  thread %s (tid %d", name, (int)threads[i].inner_tid);
            if (threads[i].inner_tid != threads[i].tid)
                printf("; %d from here", (int)threads[i].tid);
            printf("), stopped %.2f ms, native frames:\n", threads[i].stopped_ms);
            for (int f = 0; f < threads[i].count; f++)
                print_frame(dwfl, threads[i].pcs[f], threads[i].activation[f]);
        }
    }
    dwfl_end(dwfl);
}
