/*
 * python_sites.h - which Python lines launch kernels (from the sampled
 * launches) and which lines the training loop waits in (the main thread's
 * waits), added up over every process by call site; and how each process
 * read its Python frames (PI_REC_PYTHON).
 */
#ifndef PI_PYTHON_SITES_H
#define PI_PYTHON_SITES_H

#include <stdint.h>

#include "analysis/model/model.h"
#include "analysis/sites/call_sites.h"

/* One call site's share of a kernel's sampled launches, or of waits of one class. */
struct pi_line_stat {
    struct pi_call_site *site;
    char *kernel;   /* demangled (launches); NULL for waits */
    int wait_class; /* enum pi_time_class (waits); -1 for launches */
    uint64_t count;
    uint64_t total_ns; /* waits: time waited */
};

/* How one process read Python frames. */
struct pi_python_process {
    int pid;
    unsigned version; /* PY_VERSION_HEX */
    unsigned mode;    /* enum pi_python_frames */
    char *reason;
};

/* A kernel's launches by threads that had Python frames (sampled launches with a site). */
struct pi_python_launches {
    char *kernel; /* demangled */
    uint64_t count;
};

struct pi_python_sites {
    struct pi_line_stat *launches; /* by kernel (most sampled first), then by count */
    size_t launch_count;
    /* all launches of each kernel by the threads that could be sampled: those whose
     * sampled launches had Python frames (autograd's threads, launching the backward
     * pass, have none) */
    struct pi_python_launches *python_launches;
    size_t python_launch_count;
    /* sampled launches of threads that had no Python frames to give, by native site
     * (PI_CALL_SITE_NATIVE: autograd's threads), as launches */
    struct pi_line_stat *native_launches;
    size_t native_launch_count;
    struct pi_line_stat *waits; /* by time waited, most first */
    size_t wait_count;
    struct pi_python_process *processes;
    size_t process_count;
    /* this file's records, by stack id, until its end */
    void *pending;
    size_t pending_count, pending_capacity;
    void *thread_launches; /* this file's launches by thread and kernel id */
    void *python_threads;  /* this file's threads with sampled launch sites */
};

/* pi_python_sites_event - account a PI_REC_CALL_SITE or PI_REC_PYTHON record (record_dispatch.c) */
void pi_python_sites_event(struct pi_analysis *analysis, const struct pi_reader *reader,
                           const struct pi_process_info *process, const struct pi_event *ev);

/**
 * pi_python_sites_add - account @count call sites of thread @tid under stack @stack_id: a
 * PI_REC_CALL_SITE's (above), or a summary's of them (summary mode)
 * @flags: the call sites' (enum pi_call_site_flag)
 * @site_of: PI_CALL_SITE_OF of the records they belong to
 * @key: the kernel name id of a launch
 * @wait_ns: the time of the waits they belong to
 */
void pi_python_sites_add(struct pi_analysis *analysis, const struct pi_process_info *process,
                         uint32_t tid, unsigned flags, uint64_t stack_id, uint64_t site_of,
                         uint64_t key, uint64_t count, uint64_t wait_ns);

/* pi_python_sites_launch - @count launches of kernel @kernel_id (a string id of the file) by
 * thread @tid */
void pi_python_sites_launch(struct pi_analysis *analysis, uint32_t tid, uint64_t kernel_id,
                            uint64_t count);

/* pi_python_launches_of - launches of @kernel by threads that had Python frames */
uint64_t pi_python_launches_of(const struct pi_analysis *analysis, const char *kernel);

/* pi_python_sites_finish_file - resolve this file's call sites while its definitions are known */
void pi_python_sites_finish_file(struct pi_analysis *analysis, const struct pi_reader *reader);

/* pi_python_sites_merge - move the lines and processes of @from (one file, read apart:
 * file_merge.h) into @into, in their order; 0, or -1 without memory */
int pi_python_sites_merge(struct pi_analysis *into, struct pi_analysis *from);

/* pi_python_sites_sort - order the lists for the reports, once every file is read */
void pi_python_sites_sort(struct pi_analysis *analysis);

void pi_python_sites_free(struct pi_analysis *analysis);

/* pi_kernel_launch_sites - the sampled sites of @kernel, most frequent first
 * @count: receives how many; the samples of all its sites in @samples */
const struct pi_line_stat *pi_kernel_launch_sites(const struct pi_analysis *analysis,
                                                  const char *kernel, size_t *count,
                                                  uint64_t *samples);

#endif
