/*
 * recorder_internal.h - state shared by recorder.c (application side) and
 * writer.c (the writer thread). Not for hook files: they use recorder.h.
 */
#ifndef PI_RECORDER_INTERNAL_H
#define PI_RECORDER_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "buffer_pool.h"
#include "config.h"
#include "memory_cgroup.h"
#include "process_sample.h"
#include "recorder.h"
#include "string_table.h"

struct ZSTD_CCtx_s;

enum pi_write_gate { PI_WRITE_GATE_OPEN = 0, PI_WRITE_GATE_WRITER = 1, PI_WRITE_GATE_CLOSED = 2 };

#define PI_THREAD_SLOTS 1024

/*
 * Where a thread counts the records it had to drop. The writer collects
 * the counts every pass, so losses of threads still running at exit are
 * counted too. One cache line each: a thread only ever touches its own.
 */
enum pi_slot_state { PI_SLOT_FREE = 0, PI_SLOT_IN_USE = 1, PI_SLOT_ENDED = 2 };

struct pi_thread_slot {
    _Atomic uint64_t lost;
    _Atomic uint32_t tid;
    _Atomic uint32_t state; /* enum pi_slot_state; the writer frees ENDED slots */
    /* the CPU time of a thread that ended as the process did, after recording stopped: its
     * end record, which no buffer took, for the writer to write (0: none) */
    _Atomic uint64_t unsaid_exit_cpu_ns;
    struct pi_wait_in_flight wait; /* written by its thread alone */
    char padding[8];
};
_Static_assert(sizeof(struct pi_thread_slot) == 64, "a slot is one cache line");

/* Everything the writer thread owns; touched by no other thread. */
struct pi_writer {
    int fd;
    struct pi_process_sampler sampler; /* /proc/self/statm and smaps_rollup */
    int schedstat_fd;           /* the main thread's /proc schedstat, -1: none */
    struct pi_memory_cgroup memory_cgroup; /* its OOM kills, read with the samples */
    int failed;                 /* a write failed: drop everything from now on */
    uint32_t frame_sequence;
    struct pi_record *staging;  /* records waiting for the next frame */
    struct pi_record *events;   /* staging less its definitions, while a frame is encoded */
    uint32_t staged;
    uint32_t staging_capacity;
    uint8_t *encoded;           /* frame header + encoded records */
    void *compressed;
    size_t compressed_capacity;
    struct ZSTD_CCtx_s *cctx;
    uint32_t *snapshot_state;   /* per pool buffer, one pass */
    uint32_t *snapshot_committed;
    uint32_t *drain_order;      /* buffers with records to copy, oldest first */
    uint64_t *drain_keys;       /* their sequences, while they are sorted */
    uint32_t pool_active;       /* at the last pass: buffers threads hold, */
    uint32_t pool_retired;      /* buffers waiting for the writer, */
    uint32_t pool_threads;      /* and threads that need one: live, or holding one */
    uint64_t next_sample_ns;
    uint64_t sample_gap_ns;      /* the current gap between samples (see next_sample_gap) */
    int rate_refined;            /* the tick rate was measured again over REFINE_NS */
    uint64_t process_cpu_ns;     /* the process's CPU time at the last sample */
    uint64_t next_flush_ns;
    uint64_t last_frame_ns;        /* when the last periodic frame was written */
    uint32_t staged_own;           /* of those staged: samples, clock syncs, the end record */
    uint64_t next_removal_check_ns; /* when to look whether the trace file is still there */
    unsigned settled;               /* PI_EVENT_SETTLED was told (at the first flush) */
    /* creates the file and writes its header, before the first frame (writer.c):
     * 0, or -1 with w->failed set and the reason said */
    int (*open_file)(struct pi_writer *w);
};

struct pi_recorder {
    struct pi_config config;
    struct pi_buffer_pool pool;
    struct pi_string_table strings;
    _Atomic int state;            /* enum pi_recorder_state */
    int pid;
    /* a fork child that has not exec'd (a DataLoader worker): its main thread's reads of
     * its index queue look like a loop's batches, so it marks no steps */
    int fork_child;
    pthread_key_t thread_key;
    int thread_key_ok;
    double ticks_per_second;      /* measured once, inherited by fork children */
    /* when this process's recording began: the header's time base, so no
     * record is older than its file's start */
    uint64_t start_ticks, start_monotonic_ns, start_realtime_ns;
    /* the main thread's CPU time then: what it used before (the dynamic loader, a
     * program that exec'd this one) is not this trace's */
    uint64_t main_cpu_start_ns;

    /* slot 0 is shared by threads that found no free slot */
    struct pi_thread_slot thread_slots[PI_THREAD_SLOTS] __attribute__((aligned(64)));
    _Atomic uint32_t thread_slots_used; /* slots at or above this were never claimed */
    _Atomic uint32_t live_threads;      /* threads that record and have not exited */

    /* Writer coordination (futex words). */
    _Atomic uint32_t writer_wake;
    _Atomic uint32_t flush_requested;
    _Atomic uint32_t flush_done;
    _Atomic uint32_t stop_requested;
    _Atomic uint32_t writer_finished;
    _Atomic int writer_running;
    /* who may write to the trace file now (enum pi_write_gate): the writer,
     * frame by frame, or, for good, a process that ended before the writer
     * finished (unfinished_writer.h); and the last record frame written */
    _Atomic uint32_t write_gate;
    _Atomic uint32_t sequence_written;
    int end_reason;
    int end_status;

    /* Statistics (the writer adds, anyone reads). */
    _Atomic uint64_t stat_records;
    _Atomic uint64_t stat_lost;
    _Atomic uint64_t stat_frames;
    _Atomic uint64_t stat_bytes;
    _Atomic uint64_t stat_raw_bytes;
    _Atomic uint64_t stat_wakes; /* writer loop passes (each a wake from its wait) */

    char trace_path[PATH_MAX];
    /* a fork child: the ids below inherited_below are its parent's, defined in the parent's
     * file of this name (PI_HDR_INHERITED); 0 and empty otherwise */
    uint32_t inherited_below;
    char parent_file[256];
    struct pi_writer writer;
};

extern struct pi_recorder pi_rec;

/* The first estimate of the tick rate comes from the recorder's start and
 * the writer's first moments (or a first caller's), at least this far
 * apart: usually further already, so no spin. A 1 ms spin used to cost
 * every process 1 ms. */
#define PI_FIRST_RATE_MIN_NS 100000u

/* pi_thread_cpu_in_trace - thread @tid's CPU time since this process's recording began (ns) */
uint64_t pi_thread_cpu_in_trace(uint32_t tid);

/* pi_writer_launch - start the writer thread; 0 or -1 (reason printed) */
int pi_writer_launch(void);

/* pi_writer_wake - nudge the writer (a buffer filled, a flush is wanted) */
void pi_writer_wake(void);

#endif
