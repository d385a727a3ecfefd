/*
 * summary_policy.h - what summary mode does with each kind of record, beside
 * the format whose PI_REC_SUMMARY keys it fills (trace_format.h): whether a
 * record is counted or written in full, the key it is counted under, how a
 * GPU time finds the call it timed, and which records end a training step.
 * The recorder's summary mode (preload/core/summary_mode.c) applies these
 * classes without knowing what the records are.
 *
 * Steps are what stays in full: the main thread's waits, its waits for and
 * receives from pipes and sockets and its blocking copies make up its
 * steps, so a slow step's parts can be read whole; the pin-memory thread's
 * receipts of batches too.
 */
#ifndef PROFINJECT_SUMMARY_POLICY_H
#define PROFINJECT_SUMMARY_POLICY_H

#include <stdint.h>
#include <string.h>

#include "trace_format.h"

enum pi_summary_role {
    PI_SUMMARY_IN_FULL = 0, /* written one by one */
    PI_SUMMARY_COUNTED,     /* counted under its key */
    /* counted under its key but for the first one, in full: a thread's
     * first wait of a kind, its first call on a socket, keep their record */
    PI_SUMMARY_COUNTED_AFTER_FIRST,
};

/* How a call and the GPU time measured for it find each other. */
enum pi_summary_pairing {
    PI_PAIR_NONE = 0,
    PI_PAIR_CALL,   /* a call whose GPU time comes later, by the same correlation id */
    PI_PAIR_TIMING, /* the GPU time of a call, by its correlation id */
};

/* How a record marks a step of the training loop, for the slow-step trigger. */
enum pi_step_mark {
    PI_STEP_NONE = 0,
    PI_STEP_SPAN,     /* the record is a step: [ts, ts + dur) */
    PI_STEP_BOUNDARY, /* a step ends with the record: it ran since the previous boundary */
};

struct pi_summary_class {
    uint8_t role;    /* enum pi_summary_role */
    uint8_t pairing; /* enum pi_summary_pairing */
    uint8_t step;    /* enum pi_step_mark */
    /* key[2] is a path, to be counted under its directory (pi_summary_directory_length):
     * summary mode interns it */
    uint8_t by_directory;
    uint64_t key[3]; /* the summary's key (trace_format.h); a timing's comes from its call */
    uint64_t bytes;  /* what the record moved, counted into the summary */
    uint64_t ticks;  /* the time counted for it: its dur, or the time of the record it names */
    uint64_t correlation; /* PI_PAIR_*: the id that pairs a call with its GPU time */
    /* PI_PAIR_CALL: key[0] and key[1] of its GPU time's summary; PI_PAIR_TIMING:
     * those the GPU time names itself (the kernel the GPU ran), else 0, 0 */
    uint64_t timing_key[2];
};

/* pi_summary_size_class - the analyzer's size classes of copies, by their low
 * bound: <64 KiB, 64 KiB-1 MiB, 1-16 MiB, >=16 MiB */
static inline uint64_t pi_summary_size_class(uint64_t bytes)
{
    return bytes < (64u << 10)   ? 0
           : bytes < (1u << 20)  ? (64u << 10)
           : bytes < (16u << 20) ? (1u << 20)
                                 : (16u << 20);
}

/*
 * Which I/O is counted: regular files on any thread; on the other threads
 * all but what steps are made of, the waits for a pipe or a socket and the
 * reads of a pipe (a pin-memory thread's receipts of batches). The main
 * thread's data waits (its waits for a pipe or a socket and its receives
 * from them) stay in full: its batch receipts are its steps; what it sends
 * and closes is counted (a batch's tensors come with a dozen such calls to
 * the workers' resource sharer, which the steps do not read). A fork
 * child's main thread (a DataLoader worker's loop) makes no steps: its wait
 * for the next index (a poll) stays, the reads that take the index after it
 * (microseconds, two a batch) are counted.
 */
static inline int pi_summary_counts_io(const struct pi_record *r, int main_thread,
                                       int fork_child)
{
    unsigned op = PI_IO_OP(r->flags), fd_class = PI_IO_CLASS(r->flags);
    if (fd_class == PI_FD_FILE)
        return 1;
    int waits = (fd_class == PI_FD_PIPE || fd_class == PI_FD_SOCKET) && pi_io_waits_ready(op);
    if (main_thread)
        return fork_child ? !waits : !pi_io_is_data_wait(op, fd_class);
    return !(waits || pi_io_is_pipe_receipt(op, fd_class));
}

/*
 * A step, for the trigger, is a top-level NVTX range of the main thread
 * (the range is the step), or ends with the main thread's 4-byte read from
 * a pipe (a DataLoader batch's length arriving: the step is the time since
 * the previous one). The analyzer finds steps with more rules (the
 * pin-memory relay, read-backs); those steps are still reported, they only
 * do not trigger.
 */
static inline uint8_t pi_summary_step_mark(const struct pi_record *r, int main_thread)
{
    if (!main_thread)
        return PI_STEP_NONE;
    if (r->kind == PI_REC_NVTX_RANGE && r->arg[1] == 0)
        return PI_STEP_SPAN;
    if (r->kind == PI_REC_IO && pi_io_is_pipe_receipt(PI_IO_OP(r->flags), PI_IO_CLASS(r->flags)) &&
        r->arg[1] == 4 && !(r->flags & PI_FLAG_FAILED))
        return PI_STEP_BOUNDARY;
    return PI_STEP_NONE;
}

/* Where a package's files lie: a path under one of these is counted under its package. */
#define PI_SUMMARY_PYCACHE "__pycache__"
static const char *const pi_summary_package_roots[] = {"/site-packages/", "/dist-packages/",
                                                       "/lib/python"};

/**
 * pi_summary_directory_length - the length of the directory @path is counted
 * under, ending in '/'; 0 for a path without one
 *
 * A file is counted under its directory, but a module or library of an
 * installed package, or of Python's own library, under its package's top
 * directory (`.../site-packages/torch/`, `.../lib/python3.11/json/`; a
 * module at the top, compiled or not, under the top itself): importing
 * torch reads 1,800 files from 330 directories, which the report names
 * better, and the trace holds smaller, by package.
 */
static inline size_t pi_summary_directory_length(const char *path, size_t length)
{
    const char *end = path + length;
    for (size_t i = 0; i < sizeof(pi_summary_package_roots) / sizeof(*pi_summary_package_roots);
         i++) {
        const char *root = pi_summary_package_roots[i];
        size_t n = strlen(root);
        for (const char *p = path; p + n <= end; p++) {
            if (memcmp(p, root, n) != 0)
                continue;
            /* the root's own '/' (after "python3.11" for Python's library), then its top
             * directory's: the compiled modules of the root's own are in its __pycache__ */
            const char *top = memchr(p + n - 1, '/', (size_t)(end - (p + n - 1)));
            if (!top)
                break;
            const char *slash = memchr(top + 1, '/', (size_t)(end - top - 1));
            if (slash && (size_t)(slash - top) == sizeof(PI_SUMMARY_PYCACHE) &&
                memcmp(top + 1, PI_SUMMARY_PYCACHE, sizeof(PI_SUMMARY_PYCACHE) - 1) == 0)
                slash = NULL;
            return (size_t)((slash ? slash : top) - path) + 1;
        }
    }
    const char *last = memrchr(path, '/', length);
    return last ? (size_t)(last - path) + 1 : 0;
}

/**
 * pi_summary_classify - what summary mode does with @r
 * @pid: the process's id, which is its main thread's tid
 * @fork_child: the process is a fork child that has not exec'd (a DataLoader worker)
 * @c: receives the class
 *
 * A fork child marks no steps: its main thread's reads of its index queue
 * look like a loop's batches. Regular files are counted by directory, the
 * first read included: most are read once (the modules an import loads,
 * a dataset's samples, the shared-memory files of a batch's tensors), so
 * kept by file they would cost the trace a record and a path each, every
 * epoch's workers again.
 */
static inline void pi_summary_classify(const struct pi_record *r, uint32_t pid, int fork_child,
                                       struct pi_summary_class *c)
{
    int main_thread = r->tid == pid;
    memset(c, 0, sizeof(*c));
    c->ticks = r->dur;
    c->step = fork_child ? PI_STEP_NONE : pi_summary_step_mark(r, main_thread);
    switch (r->kind) {
    case PI_REC_GPU_LAUNCH:
        c->role = PI_SUMMARY_COUNTED;
        c->key[1] = r->arg[1];
        c->pairing = PI_PAIR_CALL;
        c->correlation = r->arg[0];
        c->timing_key[0] = PI_REC_GPU_LAUNCH;
        c->timing_key[1] = r->arg[1] & 0x7fffffffu;
        return;
    case PI_REC_GPU_COPY:
        /* the main thread's blocking copies (loss.item()) are its steps' synchronisation */
        c->role = !main_thread || (r->flags & (PI_CUDA_ASYNC | PI_CUDA_NESTED))
                      ? PI_SUMMARY_COUNTED
                      : PI_SUMMARY_IN_FULL;
        c->key[0] = pi_summary_size_class(r->arg[0]);
        c->bytes = r->arg[0];
        c->pairing = PI_PAIR_CALL;
        c->correlation = r->arg[1];
        c->timing_key[0] = PI_REC_GPU_COPY;
        c->timing_key[1] = r->flags;
        return;
    case PI_REC_GPU_TIME:
        c->role = PI_SUMMARY_COUNTED;
        c->pairing = PI_PAIR_TIMING;
        c->correlation = r->arg[0];
        if ((r->flags & PI_GPU_TIME_PART) && r->arg[2]) { /* the GPU's own name (CUPTI) */
            c->timing_key[0] = PI_REC_GPU_LAUNCH;
            c->timing_key[1] = r->arg[2];
        }
        return;
    case PI_REC_IO:
        if (!pi_summary_counts_io(r, main_thread, fork_child))
            return;
        c->by_directory = PI_IO_CLASS(r->flags) == PI_FD_FILE;
        c->role = c->by_directory ? PI_SUMMARY_COUNTED : PI_SUMMARY_COUNTED_AFTER_FIRST;
        c->key[2] = r->arg[2];
        c->bytes = !(r->flags & PI_FLAG_FAILED) && pi_io_moves_bytes(PI_IO_OP(r->flags))
                       ? r->arg[1]
                       : 0;
        return;
    case PI_REC_CALL_SITE:
        /* the Python frames of a wait or a sampled launch: the analyzer makes a count and a
         * time of them by frames (wait_sites, gpu_modules), so they are counted by frames, a
         * wait's time with them; an allocation's frames name its record: in full */
        if (PI_CALL_SITE_KIND(r->arg[1]) == PI_REC_GPU_LAUNCH)
            c->key[2] = r->arg[2]; /* the kernel */
        else if (PI_CALL_SITE_KIND(r->arg[1]) == PI_REC_IO ||
                 PI_CALL_SITE_KIND(r->arg[1]) == PI_REC_WAIT)
            c->ticks = r->arg[2];
        else
            return;
        c->role = PI_SUMMARY_COUNTED;
        c->key[0] = r->arg[0];
        c->key[1] = r->arg[1];
        return;
    case PI_REC_SPAN:
        /* optimizer steps, backward calls, batches and a thread's outermost module calls
         * make the exact steps (a forward between two batches makes them two steps'; a
         * no_grad one, an evaluation loop): whole; the others (a request, a user's
         * function, a collection) are counted by name and depth, their durations'
         * percentiles kept in the buckets */
        if (PI_SPAN_KIND(r->arg[0]) == PI_SPAN_OPTIMIZER_STEP ||
            PI_SPAN_KIND(r->arg[0]) == PI_SPAN_BACKWARD ||
            PI_SPAN_KIND(r->arg[0]) == PI_SPAN_DATALOADER_NEXT ||
            PI_SPAN_KIND(r->arg[0]) == PI_SPAN_MODULE)
            return;
        c->role = PI_SUMMARY_COUNTED;
        c->key[0] = PI_SPAN_ARG0(PI_SPAN_NAME(r->arg[0]), PI_SPAN_KIND(r->arg[0]), 0, 0);
        c->key[1] = PI_SPAN_DEPTH(r->arg[0]);
        return;
    case PI_REC_WAIT:
        /* the main thread's make its steps */
        c->role = main_thread ? PI_SUMMARY_IN_FULL : PI_SUMMARY_COUNTED_AFTER_FIRST;
        c->key[0] = r->arg[0];
        c->key[1] = r->arg[1];
        return;
    default:
        return;
    }
}

#endif
