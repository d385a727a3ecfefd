/*
 * model.h - what the analysis builds, as the reports read it: processes,
 * their threads, steps and windows, and the analysis that holds them. Types
 * only: the parts of the pass (analysis/pass/) fill them, the verdicts and
 * reports read them. Memory grows with the number of processes, threads,
 * call kinds and files, never with the number of events.
 */
#ifndef PI_MODEL_H
#define PI_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/common/histogram.h"
#include "analysis/common/latency_table.h"
#include "analysis/common/series.h"
#include "reader/lineage.h"
#include "reader/trace_reader.h"

/* Where a thread's time went (ns). CPU is the kernel's figure where the trace has it, else
 * what is left of its wall time; OTHER is what is left beside a measured CPU time. */
enum pi_time_class {
    PI_TIME_DATA_WAIT, /* main thread of a process with children (data-loader workers)
                        * blocked on pipes/sockets: waiting for them */
    PI_TIME_FILE_IO,   /* reads, writes, opens of regular files */
    PI_TIME_OTHER_IO,  /* other descriptors: devices, ttys, other threads' pipes */
    PI_TIME_LOCK_WAIT, /* mutex, condition (the GIL), semaphore waits */
    PI_TIME_SYNC,      /* blocked in CUDA synchronisation */
    PI_TIME_SLEEP,     /* asleep (nanosleep, time.sleep): neither computing nor waiting */
    PI_TIME_CPU,       /* on a CPU (see above) */
    PI_TIME_OTHER,     /* the rest: blocked in calls no hook sees, or waiting for a CPU */
    PI_TIME_CLASS_COUNT
};

extern const char *const pi_time_class_names[PI_TIME_CLASS_COUNT];

struct pi_thread_timeline;
struct pi_call_site;

/* The main thread's CPU clock beside the process samples (PI_THREAD_CPU_SAMPLE), in time
 * order: held while its file is read, to split the steps, then released. */
struct pi_clock_samples {
    struct pi_clock_sample {
        uint64_t ns, cpu_ns;
    } *at;
    size_t count, capacity;
};

/* A thread's CPU time by the kernel's clock (PI_REC_THREAD_EXIT, PI_REC_THREAD_CPU), counted
 * only while recording was on: each span from an opening edge (or the thread's start) to a
 * closing edge or its end. Filled by analysis/host/thread_cpu.c. */
struct pi_thread_cpu {
    uint64_t spans_ns;  /* the spans that closed */
    uint64_t open_ns;   /* the clock at the opening edge of the span under way */
    uint64_t end_ns;    /* the clock at the thread's end, when it ended while recorded */
    uint64_t end_open_ns; /* open_ns of the span its end closed */
    int ended;          /* end_ns holds a figure */
    int measured;       /* the trace has a figure of its own for this thread */
};

struct pi_thread_info {
    uint32_t tid;
    char name[64];
    uint64_t first_ns, last_ns;
    uint64_t time[PI_TIME_CLASS_COUNT];
    /* its CPU time by the kernel's clock while recording was on (thread_cpu.h) */
    struct pi_thread_cpu cpu;
    uint64_t events;
    /* its waits over time (thread_timeline.h), NULL: none, or not drawn on the page (let go at
     * the commit of its file) */
    struct pi_thread_timeline *timeline;
};

/* The main thread's running wait totals at a moment where a step may start or end. */
struct pi_step_point {
    uint64_t ns, wait_ns, sync_ns;
};

/* Training steps of one thread: each batch received from the data loader starts one. */
struct pi_steps {
    uint64_t count;  /* complete steps */
    uint64_t warmup; /* the first steps, reported apart */
    struct pi_histogram steady_ns, warmup_ns;
    uint64_t steady_total_ns, steady_wait_ns, steady_sync_ns, steady_gpu_ns;
    uint64_t steady_receive_ns; /* getting their next batch but not blocked: receiving it */
    /* the main thread's CPU time in the steady steps, by its clock (steady_cpu_measured) */
    uint64_t steady_cpu_ns;
    int steady_cpu_measured;
    uint64_t warmup_total_ns, warmup_wait_ns;
    /* steps past the warm-up that hold an evaluation loop: left out of the steady figures */
    uint64_t evaluation_steps, evaluation_steps_ns;
    /* detection state (batch_receipts.c) */
    uint64_t wait_total_ns, sync_total_ns; /* the main thread's data and GPU waits so far */
    /* the last receipt's end, where its steps start (ns 0: none yet) */
    struct pi_step_point span_start;
    struct pi_step_point receipt_end;   /* the current cluster of data waits' end so far */
    struct pi_step_point cluster_start; /* where the current cluster of data waits began */
    /* the first cluster since the last receipt that read no data: the loop
     * waiting for its workers to end (ns 0: none) */
    struct pi_step_point quiet;
    int in_receive;               /* the receipt read data from a pipe */
    uint64_t receive_messages;    /* batch messages it read */
    uint64_t message_end_ns;      /* where the last batch message's read ended */
    /* where each batch message of the current cluster was read, while they fit */
    struct pi_step_point cluster_messages[16];
    unsigned cluster_message_count;
    /* a cluster of several messages ended at pending_end: its boundary waits to see whether
     * the loop reads more batches (batch_receipts.c) */
    int boundary_pending;
    struct pi_step_point pending_end, pending_cluster_start;
    int after_header;             /* the last pipe read was a message's length */
    int ready_polled;             /* the last data wait found a descriptor ready: a read comes */
    uint64_t largest_payload;     /* the largest batch message's first read */
    uint64_t batches_held;        /* batches read and given no step yet */
    uint64_t batches_carried_in;  /* of them, those the span before left to the open one */
    void *wakes;                  /* the main thread's posts since the open span began */
    size_t wake_count, wake_capacity;
    int wakes_overflowed;         /* some were not kept */
    uint64_t spans, spans_one_post_a_batch; /* spans with posts; of them, a post a batch */
    uint64_t agreement_carry; /* batches a span of fewer posts left to the next, as counted */
    int agreement_open;       /* that span agrees if the next one's posts take them */
    /* steps from spans (span_steps.h): the backward calls in them all, and in the median
     * step (their micro-batches); 0: not counted */
    uint64_t micro_batches;
    double micro_batches_p50;
    /* the split of the steps with two micro-batches or more (gradient accumulation), over
     * the steady ones (all of them where no steady step has two): each micro-batch's time,
     * from its step's start or the previous backward call's return to its own backward
     * call's return; each step's time after its last backward call returned (the optimizer
     * step and the rest); and the micro-batches' time and those steps' time in all */
    struct pi_histogram micro_batch_ns, after_micro_batches_ns;
    uint64_t micro_batches_total_ns, split_steps_total_ns;
    /* detection state (steps.c): steps from this one (from 0) on are steady whatever their
     * count (0: micro-batches are not timed); the micro-batches of those before, until
     * pi_steps_finish knows which of them are warm-up */
    uint64_t warmup_most;
    void *early_micro_batches;
    size_t early_count, early_capacity;
    void *steps; /* every step: start, end, waits, GPU time (steps.c) */
    size_t capacity;
    void *pending; /* GPU work after the last finished step */
    size_t pending_count, pending_capacity;
};

struct pi_gpu_memory;
struct pi_step_sources;
struct pi_span_steps;
struct pi_spans;
struct pi_requests;
struct pi_evaluation_loops;
struct pi_python_time;
struct pi_python_lines;
struct pi_native_time;
struct pi_phases;
struct pi_ranks;

/* A capture window: recording on request, from start_ns to end_ns (CLOCK_MONOTONIC ns). */
struct pi_window {
    uint64_t start_ns, end_ns;
};
#define PI_MAX_WINDOWS 64

/* A window of full detail in a summary-mode stream (format 6, PI_REC_DETAIL). */
struct pi_detail_window {
    uint64_t start_ns, end_ns;
    unsigned reason;  /* enum pi_detail_reason */
    uint64_t step_ns; /* the slow step that opened it */
};

/* What a summary-mode stream held (pass/summary_events.c); all 0 for a full one. */
struct pi_summary_info {
    uint64_t summaries;  /* PI_REC_SUMMARY records */
    uint64_t summarised; /* records they stand for */
    uint64_t replayed;   /* flight-ring records in windows: detail, counted in the summaries */
    int replaying;
    struct pi_detail_window windows[PI_MAX_WINDOWS];
    size_t window_count;
};

/* Memory growth once the job runs steadily (memory_growth.c). */
struct pi_memory_growth {
    int by_steps;          /* 1: over the steady steps; 0: over the last third of the trace */
    uint64_t steady_steps;
    double device_bytes_per_step, rss_bytes_per_step; /* least squares, by_steps */
    uint64_t device_start_step, rss_start_step;       /* where growth starts (from 1), 0: none */
    uint64_t device_growing_steps, rss_growing_steps; /* from the start step to the last */
    double device_bytes_per_s, rss_bytes_per_s;       /* least squares, without steps */
};
struct pi_gpu_timeline;
struct pi_python_sites;
struct pi_collectives;
struct pi_gemm;

/* A device the process used, as the driver described it (PI_REC_DEVICE); 0: not said. */
struct pi_device_info {
    unsigned ordinal, major, minor, sms, clock_khz;
    char name[128];
};
#define PI_MAX_DEVICES 16

struct pi_process_info {
    char *path;
    struct pi_file_header header;
    char *command, *host, *cgroup;
    char *identity; /* the launchers' variables, "KEY=value" lines (rank_identity.h) */
    long rank;      /* the global rank a launcher gave the process, -1: none */
    /* CLOCK_REALTIME minus CLOCK_MONOTONIC over the clock syncs: how far the
     * wall clock moved against the monotonic one during the run (NTP), and
     * the widest gap between the two readings of one sync */
    int64_t clock_offset_min, clock_offset_max;
    uint64_t clock_syncs, clock_read_ns;
    uint64_t start_ns, end_ns;
    uint64_t records, lost;
    uint64_t strings_lost; /* names, paths and stacks the recorder had no room for */
    /* a fork child whose inherited names, paths and stacks (its parent's) cannot be looked
     * up: why (its parent's trace missing...); NULL when resolved or none */
    char *inherited_unresolved;
    int ended;
    int64_t end_status;
    uint64_t end_reason;
    int replaced_by_exec; /* its image ended in an exec: no end record is due */
    char *stderr_tail;      /* the end of what it wrote to stderr (format 9), NULL: none */
    /* the signal that ended it, as its handler saw it (format 9): who sent it or where the
     * thread faulted, and that thread's frames */
    struct pi_fatal_signal {
        int seen;
        uint32_t tid, signo;
        int32_t code;     /* si_code */
        unsigned flags;   /* enum pi_signal_flag: what detail holds */
        uint64_t detail;  /* the sender's pid | its uid << 32, or the fault's address */
        struct pi_call_site *site; /* NULL: no frames */
        uint64_t ns;      /* when it came */
    } fatal;
    /* the first SIGINT, SIGTERM or SIGHUP its own handler took (PI_SIGNAL_HANDLED, format 13):
     * Python's KeyboardInterrupt, torchrun's agent; site is never set */
    struct pi_fatal_signal stop;
    int stopped; /* enum pi_stopped_how (pass/job_stop.h): ended with the job's stop */
    /* the processes that sent it stop signals, named as the signal came (format 13) */
    struct pi_signal_sender {
        uint32_t pid;
        char *command; /* its command line then; NULL: gone or not readable */
    } senders[4];
    int sender_count;
    /* the threads that were blocked when a fatal signal ended it, each in a wait that never
     * ended (PI_REC_WAIT_IN_FLIGHT, format 14) */
    struct pi_blocked_thread {
        uint32_t tid, what;        /* what: PI_IN_FLIGHT_WAIT or PI_IN_FLIGHT_IO_CALL */
        uint64_t object;           /* the wait's address, the I/O call's descriptor */
        uint64_t since_ns, for_ns; /* blocked from since_ns, for for_ns until the signal */
        struct pi_call_site *site; /* its Python frames then; NULL: none */
    } *blocked;
    size_t blocked_count;
    uint64_t stderr_bytes;  /* what it wrote to stderr in all */
    uint64_t children;     /* fork records */
    /* the children it reaped and how they ended, by its wait calls (format 9) */
    struct pi_child_status {
        uint32_t pid, status; /* status: as waitpid gives it */
        uint64_t ns;
    } *reaped;
    size_t reaped_count, reaped_capacity;
    int truncated;
    /* damaged stretches of the file skipped, and the frames of records lost with them */
    uint64_t damaged_bytes, damaged_frames;
    uint64_t cpu_user_ns, cpu_sys_ns;
    uint64_t profiler_cpu_ns; /* the profiler's own threads, from the end record; 0: unknown */
    uint64_t rss_peak, rss_peak_ns, rss_last;
    struct pi_series rss;
    /* its memory cgroup's OOM kill count as it read it (format 9), and where it rose */
    struct pi_oom_kills {
        uint32_t readings, rise_count;
        uint64_t first, last;
        struct pi_oom_rise {
            uint64_t ns, kills, limit_bytes, usage_bytes; /* kills: the count after the rise */
        } rises[4];
    } oom;
    /* proportional set size, read now and then (format 8); pss.count 0: never read */
    uint64_t pss_peak, pss_peak_ns;
    struct pi_series pss;
    struct pi_clock_samples main_cpu;
    uint64_t main_still_ns; /* how long before its end the main thread's clock last advanced */
    /* the main thread between the end of its first wait for data and the start of its last
     * (working_span.h): a data-loader worker's time making batches */
    struct pi_working_span {
        uint64_t start_ns, end_ns;
        uint64_t waited_at_start[PI_TIME_CPU], waited_at_end[PI_TIME_CPU];
        uint64_t cpu_ns;  /* by the main thread's clock, where cpu_measured */
        int cpu_measured; /* its samples cover the span */
        int64_t ready_fd; /* the fd the last wait found ready, -1: the last was no such wait */
        /* the main thread's waits that summary mode counted (a worker's file reads): they
         * come at the interval's end, after the span's last wait, so they are kept apart
         * (the snapshots above leave them out) and spread over their own span */
        uint64_t summarised[PI_TIME_CPU]; /* so far, by class */
        struct pi_summarised_wait {
            uint64_t start_ns, end_ns, ns;
            unsigned time_class;
        } *pieces;
        size_t piece_count, piece_capacity;
    } working;
    /* the main thread's time ready to run and waiting for a CPU so far (the kernel's schedstat
     * run delay, PI_FLAG_RUN_DELAY) at its first and last sample */
    struct pi_run_delay_sample {
        uint64_t ns, delay_ns;
    } run_delay_first, run_delay_last;
    uint64_t run_delay_samples;
    struct pi_thread_info *threads;
    size_t thread_count, thread_capacity, last_thread;
    struct pi_steps steps; /* of the main thread */
    /* top-level NVTX ranges of the main thread: the steps when no data loader shows them */
    struct pi_steps nvtx_steps;
    uint64_t nvtx_wait_ns, nvtx_sync_ns; /* since the last top-level range ended */
    const char *steps_from;               /* "data loader", "NVTX", ... (relay_steps.c) or NULL */
    /* the thread whose optimizer steps or backward calls are the steps (span_steps.h); 0:
     * the steps are the main thread's, found otherwise */
    uint32_t steps_tid;
    uint64_t gpu_busy_ns;
    struct pi_gpu_memory *gpu; /* NULL when the process made no CUDA calls */
    /* relay and read-back step detection (relay_steps.c), while the file is read: NULL after */
    struct pi_step_sources *step_sources;
    struct pi_span_steps *span_steps; /* steps from spans, while the file is read (span_steps.h) */
    struct pi_spans *spans; /* marked Python functions' calls by name (host/spans.h); NULL: none */
    /* evaluation loops inside training (host/evaluation_loops.h); NULL: none */
    struct pi_evaluation_loops *evaluation_loops;
    /* the requests it served (host/requests.h); once its file is read, NULL: it served none */
    struct pi_requests *requests;
    struct pi_memory_growth growth;
    /* capture windows; none when the whole run was recorded. With windows, start_ns and end_ns
     * are the first window's start and the last one's end: times and shares cover them only */
    struct pi_window windows[PI_MAX_WINDOWS];
    size_t window_count;
    struct pi_summary_info summary;
    int window_open;
    int thread_cpu_edges; /* the threads' CPU clocks at the windows' edges are in the trace */
    uint64_t window_ns; /* recorded time: the windows' lengths together */
    uint32_t relay_tid; /* the thread that hands the main thread its batches, 0: none */
    int python;         /* the image ran Python (its interpreter was found) */
    struct pi_gpu_timeline *gpu_timeline; /* GPU busy over time, launch span; NULL: no launch, no GPU time */
    struct pi_collectives *collectives; /* NCCL (analysis/gpu/collectives.h); NULL when none */
    struct pi_gemm *gemm; /* cuBLAS products (analysis/gpu/gemm.h); NULL when no CUDA launch */
    struct pi_device_info devices[PI_MAX_DEVICES];
    size_t device_count;
    struct pi_python_lines *python_lines; /* the user's lines that held the main thread
                                           * (sites/python_lines.h); NULL: no samples */
    struct pi_phases *phases; /* start-up, imports, compiling, steps... (sites/phases.h);
                               * NULL: no Python time samples */
    struct pi_native_time *native_time; /* CPU time by thread and native operator
                                         * (sites/native_time.h); NULL: no samples */
};

/* pi_process_unended - @p was recorded to its end but has no end record: killed outright
 * (SIGKILL, the OOM killer) or still running when read. Not an image that went on in an exec,
 * nor one recorded by windows that closed while it ran (attach, capture windows). */
static inline int pi_process_unended(const struct pi_process_info *p)
{
    return !p->ended && !p->replaced_by_exec && !(p->window_count > 0 && !p->window_open);
}

/* pi_process_host_pid - the pid the host sees for @p when it lived in another PID
 * namespace (a container) and that pid is known, else 0 */
static inline int pi_process_host_pid(const struct pi_process_info *p)
{
    return p->header.outer_pid > 0 && p->header.outer_pid != p->header.pid ? p->header.outer_pid
                                                                           : 0;
}

/* The host memory of the whole process tree (analysis/host/host_memory.h). */
struct pi_host_memory {
    /* the processes' RSS added up: a page shared by several counts once in each */
    uint64_t rss_peak_bytes; /* 0: no samples */
    uint64_t rss_peak_ns;    /* when (CLOCK_MONOTONIC) */
    uint32_t processes_alive; /* with RSS at that moment */
    /* the processes' latest PSS added up (format 8): what the tree held, each shared page
     * counted once, at moments when every process alive had read it since the latest start
     * among them (host_memory.c). 0: no process read its PSS, or no such moment; then the
     * tree's figure is the RSS one */
    uint64_t pss_peak_bytes;
    uint64_t pss_peak_ns;
    uint32_t pss_processes_alive;
    /* processes that never read their PSS (they ended within 100 ms): the moments they were
     * alive are left out of the PSS peak */
    uint32_t pss_processes_unread;
};

struct pi_analysis;

/*
 * An observer sees the pass as it happens, for outputs that stream every
 * event (the Chrome trace) or write rows per file (the CSV export): the
 * analysis calls it and knows nothing of what it writes. Each callback may
 * be NULL.
 *
 * process, event and process_end are about one file and are called by the
 * thread that reads it; they get the context open_file returned for that
 * file (the observer's context when open_file is NULL) and the analysis the
 * file's shares go to (with parallel reading, the file's own: file_merge.h).
 * commit_file is then called in file order, one file at a time, with the
 * whole analysis and the process at its place in it: what depends on the
 * order of the files goes out there.
 */
struct pi_analysis_observer {
    void *context;
    int keep_memory_changes; /* the device memory changes are wanted (pi_gpu_take_changes) */
    /* every event is wanted in file order, from one thread (the Chrome trace streams them
     * into one array): the files are read one at a time, whatever the jobs asked */
    int sequential;
    void (*begin)(void *context, const struct pi_analysis *analysis);
    void *(*open_file)(void *context); /* NULL: out of memory (the file is read unobserved) */
    void (*process)(void *file_context, const struct pi_analysis *analysis,
                    const struct pi_process_info *process);
    void (*event)(void *file_context, const struct pi_analysis *analysis,
                  const struct pi_reader *reader, const struct pi_process_info *process,
                  const struct pi_event *ev);
    void (*process_end)(void *file_context, const struct pi_analysis *analysis,
                        const struct pi_process_info *process);
    /* frees @file_context; called for every file open_file was called for */
    void (*commit_file)(void *context, void *file_context, const struct pi_analysis *analysis,
                        const struct pi_process_info *process);
    void (*end)(void *context, const struct pi_analysis *analysis);
};

struct pi_analysis_options {
    int exact;
    unsigned warmup_steps; /* 0: automatic (10% of steps, at least 1) */
    /* sees every event as it is read (a timeline writer); NULL: none */
    const struct pi_analysis_observer *observer;
    int progress;          /* progress on stderr */
    /* files read at once, each whole by one thread, merged in file order (parallel_pass.h);
     * 0 or 1: one after the other on the calling thread */
    unsigned jobs;
};

struct pi_gpu_totals {
    int timing_source; /* enum pi_gpu_timing_source, -1 when no process said */
    char timing_reason[1024]; /* a reason may name the runtime and CUPTI paths */
    uint64_t gpu_busy_ns; /* sum of GPU durations */
};

struct pi_analysis {
    struct pi_analysis_options options;
    struct pi_gpu_totals gpu;
    struct pi_process_info *processes;
    size_t process_count;
    struct pi_latency_table calls; /* group/name/detail: io, wait, ... */
    struct pi_latency_table files; /* group "file", name = path */
    uint64_t base_ns, end_ns;
    struct pi_host_memory host_memory; /* the tree's concurrent RSS peak (host_memory.h) */
    uint64_t records, lost;
    uint64_t strings_lost;
    uint64_t inherited_unresolved; /* processes with pi_process_info.inherited_unresolved */
    struct pi_lineage *lineage;    /* during the pass: where fork children's inherited ids are read */
    uint64_t damaged_files, damaged_bytes, damaged_frames; /* skipped while reading */
    uint64_t bytes_total, bytes_done;
    int bad_input;
    /* lookups by number instead of by name, on the per-event path */
    struct pi_latency_entry *io_entries[PI_IO_OP_COUNT][PI_FD_CLASS_COUNT];
    struct pi_latency_entry *wait_entries[PI_WAIT_KIND_COUNT];
    struct pi_latency_entry **by_string_id[3]; /* this file's ranges, files, NVTX ranges */
    size_t by_string_capacity[3];
    struct pi_python_sites *python_sites; /* lines that launch and wait (python_sites.h) */
    struct pi_python_time *python_time;   /* time by Python function (python_time.h) */
    struct pi_ranks *ranks; /* the ranks of a distributed job (analysis/ranks/ranks.h), NULL: none */
    /* of the ranks read so far, the one that keeps its per-step figures (training_process.h) */
    struct pi_process_info *figures_rank;
    /* the job stopped from outside (pass/job_stop.h): the first process it reached, the
     * signal, when; first NULL when it was not */
    struct pi_job_stop {
        const struct pi_process_info *first;
        const struct pi_fatal_signal *signal;
        uint64_t ns;
        size_t processes; /* the processes that ended with it, the first included */
    } stop;
};

/* pi_blocked_thread_of - what thread @tid of @p was blocked in when a fatal signal ended
 * @p, or NULL when it was not (or nothing says) */
static inline const struct pi_blocked_thread *pi_blocked_thread_of(const struct pi_process_info *p,
                                                                   uint32_t tid)
{
    for (size_t i = 0; i < p->blocked_count; i++)
        if (p->blocked[i].tid == tid)
            return &p->blocked[i];
    return NULL;
}

/* pi_process_by_pid - the traced process @pid of @a, or NULL */
static inline const struct pi_process_info *pi_process_by_pid(const struct pi_analysis *a,
                                                              int pid)
{
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].header.pid == pid)
            return &a->processes[i];
    return NULL;
}

#endif
