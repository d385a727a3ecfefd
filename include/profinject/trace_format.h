/*
 * trace_format.h - the on-disk trace format, shared by the recorder and the
 * reader. This is the one definition: change it here and bump
 * PI_FORMAT_VERSION.
 *
 * A trace file is a sequence of independent zstd frames, so `zstd -d` reads
 * any file and a file cut short is readable up to its last whole frame.
 *
 *   frame 0:  struct pi_file_header followed by its variable-length strings
 *   frame N:  struct pi_frame_header followed by record_count records of
 *             PI_RECORD_SIZE bytes, encoded as record_codec.h describes
 *
 * All integers are little-endian (the header's endian field tells a reader
 * on another machine). Timestamps are clock ticks; the header says how to
 * turn them into CLOCK_MONOTONIC nanoseconds, and CLOCK_SYNC records keep
 * the mapping exact over long runs.
 */
#ifndef PROFINJECT_TRACE_FORMAT_H
#define PROFINJECT_TRACE_FORMAT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* what every trace file's name ends with: the recorder names them so, readers look for it */
#define PI_TRACE_SUFFIX ".pitrace.zst"
#define PI_FILE_MAGIC "PROFINJ\x1a"
#define PI_FILE_MAGIC_LEN 8
/* 2: call sites as structured frames (PI_REC_MODULE, PI_REC_STACK), Python
 * frames (PI_REC_CALL_SITE, PI_REC_PYTHON), memory pool reserves
 * (PI_REC_GPU_POOL). Readers still read version 1, where a CUDA record's
 * stack id names a PI_REC_STRING of text frames. */
/* 3: time samples of the main thread's Python stack (PI_REC_PY_SAMPLE). */
/* 4: semaphore posts that wake a waiting thread (PI_REC_WAKE). */
/* 5: the rank identity in the header (PI_HDR_IDENTITY); NCCL communicators
 * and collectives (PI_REC_NCCL_COMM, PI_REC_COLLECTIVE). */
/* 6: summary mode: per-interval aggregates (PI_REC_SUMMARY) and the
 * windows of full detail among them (PI_REC_DETAIL). */
/* 7: every thread's CPU time at the edges of capture windows and at an
 * attach (PI_REC_THREAD_CPU). */
/* 8: the process's proportional set size, now and then (PI_REC_PROC_PSS).
 * Older traces have RSS only: their tree's peak is a sum of RSS. */
/* 9: the OOM kills of the process's memory cgroup (PI_REC_MEMORY_CGROUP);
 * the end of what a process wrote to stderr (PI_REC_STDERR_TAIL); a failed
 * device allocation's call site and the device's memory then
 * (PI_REC_DEVICE_MEMORY); the fatal signal's sender or fault address and
 * the frames it found (PI_REC_FATAL_SIGNAL); the children a parent reaped
 * (PI_REC_CHILD_STATUS). */
/* 10: native stacks of the application's threads, sampled by their CPU
 * time (PI_REC_NATIVE_SAMPLE); a Python time sample's CPU time
 * (PI_PY_SAMPLE_CPU). */
/* 11: a fork child's file writes only the names, paths and stacks it made
 * itself; those below an id are its parent's, in the parent's file
 * (PI_HDR_INHERITED). In summary mode, its regular files are counted by
 * directory (PI_REC_IO's summary key). */
/* 12: in summary mode, the Python frames of waits and of sampled launches
 * are counted by frames (a PI_REC_SUMMARY of PI_REC_CALL_SITE: key = stack
 * id, PI_CALL_SITE_OF, the kernel of a launch; a wait's time is the
 * summary's); a file's path is written only when a record written in full
 * names it; every process's regular files are counted by directory, an
 * installed package's by its top directory; a summary's buckets are LEB128
 * bytes (summary_buckets.h); cuBLAS and cuBLASLt matrix products with
 * their shapes and types (PI_REC_GEMM); the devices a process used
 * (PI_REC_DEVICE); a sampled launch of a thread without Python frames gets
 * its native frames (PI_CALL_SITE_NATIVE): the autograd node that launched
 * it. */
/* 14: what each thread was blocked in when a fatal signal ended its process
 * (PI_REC_WAIT_IN_FLIGHT). */
/* 15: exact spans of marked Python functions (PI_REC_SPAN). */
/* 16: the resident memory a long call of a marked Python function changed
 * (PI_REC_SPAN_HOST_MEMORY); what the framework said of a call (why
 * torch.compile compiled a frame again: PI_REC_SPAN_NOTE); an outermost
 * module call made with autograd off (PI_SPAN_NO_GRAD). */
#define PI_FORMAT_VERSION 16
#define PI_ENDIAN_MARK 0x01020304u
#define PI_FRAME_MAGIC 0x52464950u /* "PIFR" */
#define PI_RECORD_SIZE 48
/* A frame never holds more records than this; readers reject larger ones. */
#define PI_MAX_FRAME_RECORDS 65536
/* Longest interned string (paths, names); longer ones are truncated. */
#define PI_MAX_STRING_LEN 4096

enum pi_clock_source {
    PI_CLOCK_MONOTONIC = 1, /* ticks are CLOCK_MONOTONIC nanoseconds */
    PI_CLOCK_TSC = 2,       /* ticks are invariant TSC cycles */
};

/* Feature bits: what the recorder wrote into this file. */
enum pi_feature {
    PI_FEATURE_TS_DELTA = 1u << 0, /* record ts fields are deltas within a frame */
    PI_FEATURE_SHUFFLE = 1u << 1,  /* record bytes are transposed within a frame */
    /* A frame's definitions (strings, modules, stacks, with their
     * continuation slots) are not transposed: they are rows after its other
     * records, and the frame header counts their slots. Text compresses as
     * text: the example job's main process wrote half the bytes, its
     * DataLoader workers a third. */
    PI_FEATURE_DEFINITION_ROWS = 1u << 2,
};

/* Which string follows the fixed header, in this order. */
enum pi_header_string {
    PI_HDR_HOSTNAME,
    PI_HDR_CMDLINE, /* arguments separated by spaces */
    PI_HDR_EXE,
    PI_HDR_CGROUP,
    /* Format 5. Who this process is in a distributed job: "KEY=value" lines
     * of the launchers' variables that were set (RANK, LOCAL_RANK,
     * WORLD_SIZE, TORCHELASTIC_RUN_ID, SLURM_*, OMPI_COMM_WORLD_*, ...; the
     * list is PI_IDENTITY_KEYS in rank_identity.h) and boot_id=, the
     * kernel's boot id, which tells hosts apart when names repeat. */
    PI_HDR_IDENTITY,
    /* Format 11. A fork child's (not exec'd) "BOUND FILE": the strings,
     * modules and stacks of ids below BOUND are its parent's, defined in the
     * parent's trace file named FILE (a name without its directory, as the
     * recorder made it); empty for any other process. The child's file
     * defines only the ids it added. */
    PI_HDR_INHERITED,
    PI_HDR_STRING_COUNT
};

struct pi_file_header {
    char magic[PI_FILE_MAGIC_LEN];
    uint16_t version;
    uint16_t header_size; /* fixed part plus strings, in bytes */
    uint32_t endian;      /* PI_ENDIAN_MARK as written by the recorder */
    uint32_t features;    /* enum pi_feature bits */
    uint16_t record_size; /* PI_RECORD_SIZE */
    uint16_t clock_source;
    int32_t pid;           /* as seen by the process itself */
    int32_t ppid;
    int32_t outer_pid;     /* pid in the outermost namespace /proc shows, 0 if unknown */
    uint64_t pid_ns;       /* inode of /proc/self/ns/pid, 0 if unknown */
    uint64_t mnt_ns;       /* inode of /proc/self/ns/mnt, 0 if unknown */
    uint64_t start_realtime_ns;
    uint64_t start_monotonic_ns;
    uint64_t start_ticks;  /* clock ticks read together with the two above */
    double ticks_per_second;
    uint64_t flush_interval_ns;
    uint64_t sample_interval_ns;
    uint16_t string_len[PI_HDR_STRING_COUNT];
    /* followed by the strings, not NUL-terminated, in enum order; format 4
     * and older have PI_HDR_CGROUP as the last (pi_header_fixed_size) */
};

struct pi_frame_header {
    uint32_t magic;        /* PI_FRAME_MAGIC */
    uint32_t record_count;
    uint32_t sequence;     /* 1 for the first record frame, then +1 */
    uint32_t definition_slots; /* the last ones, as rows: PI_FEATURE_DEFINITION_ROWS (else 0) */
};

/*
 * Record kinds. Values are part of the format: append, never renumber.
 * Each kind lists how it uses the generic fields.
 */
enum pi_record_kind {
    PI_REC_INVALID = 0,
    /* arg0 = string id, arg1 = length; the bytes follow in
     * ceil(length / PI_RECORD_SIZE) raw continuation slots. */
    PI_REC_STRING = 1,
    /* arg0 = number of records dropped, arg1 = enum pi_lost_reason */
    PI_REC_LOST = 2,
    /* ts = ticks, arg0 = CLOCK_MONOTONIC ns, arg1 = CLOCK_REALTIME ns; from
     * format 5, dur = ticks from the monotonic read to the end of the
     * real-time one: how far apart the two readings can be; from format 12,
     * arg2 = an id below which every name, path and stack of the process is
     * defined by now or held back (a path no record written in full names:
     * a fork child that names one defines it itself) */
    PI_REC_CLOCK_SYNC = 3,
    /* arg0 = RSS bytes, arg1 = user CPU ns, arg2 = system CPU ns */
    PI_REC_PROC_SAMPLE = 4,
    /* arg0 = child pid (recorded in the parent) */
    PI_REC_FORK = 5,
    /* arg0 = string id of the program path */
    PI_REC_EXEC = 6,
    /* arg0 = exit status, arg1 = enum pi_end_reason, arg2 = CPU ns used by the
     * profiler's own threads (writer, control, GPU timing); 0 when unknown */
    PI_REC_PROCESS_END = 7,
    /* instant mark from the control API: arg0 = value, arg1 = name string id */
    PI_REC_MARK = 8,
    /* range from the control API: dur set, arg0 = value, arg1 = name id */
    PI_REC_RANGE = 9,
    /* recorded by the new thread: arg0 = creating thread's tid, arg1 = its pthread_t */
    PI_REC_THREAD_START = 10,
    /* a thread's end: recorded by the thread as it exits, and by the writer for
     * each thread still running when the process ends (the record's tid is that
     * thread's). arg0 = the thread's CPU time in this trace (ns, from the kernel's
     * thread CPU clock), arg1 = PI_THREAD_CPU_MEASURED when arg0 is that figure
     * (0: not measured) */
    PI_REC_THREAD_EXIT = 11,
    /* arg0 = name string id, arg1 = pthread_t of the named thread (0: the recording
     * thread, or the one of arg2), arg2 = tid of the named thread (0: see arg1); Python
     * names its threads from the main thread */
    PI_REC_THREAD_NAME = 12,
    /* an I/O call; flags hold the operation and fd class (PI_IO_FLAGS),
     * arg0 = fd, arg1 = result (bytes or fd; -errno on failure),
     * arg2 = path string id for regular files (0 when unknown) */
    PI_REC_IO = 13,
    /* a lock or condition wait, or a sleep, that blocked at least the wait
     * threshold: arg0 = enum pi_wait_kind, arg1 = address of the object (0 for
     * a sleep), arg2 = result */
    PI_REC_WAIT = 14,
    /* CUDA records: flags are PI_CUDA_FLAGS(api, subtype, bits), arg2 is
     * PI_CUDA_WHERE(stream id, device, call-site stack string id) */
    /* arg0 = pointer, arg1 = bytes; subtype enum pi_gpu_alloc_kind */
    PI_REC_GPU_ALLOC = 15,
    /* arg0 = pointer, arg1 = bytes when the call says (VMM unmap), else 0 */
    PI_REC_GPU_FREE = 16,
    /* dur = host launch latency, arg0 = correlation id, arg1 = kernel name id;
     * subtype enum pi_gpu_launch_kind */
    PI_REC_GPU_LAUNCH = 17,
    /* arg0 = bytes, arg1 = correlation id; subtype enum pi_gpu_copy_kind,
     * PI_CUDA_PINNED when the host side is page-locked */
    PI_REC_GPU_COPY = 18,
    /* host blocked until the GPU caught up: subtype enum pi_gpu_sync_kind,
     * arg0 = event or stream handle */
    PI_REC_GPU_SYNC = 19,
    /* GPU-side duration of a launch or copy: dur = GPU time, arg0 = its
     * correlation id, arg1 = enum pi_gpu_timing_source; ts = the GPU start
     * with CUPTI, the host end of the launch with event pairs (which do not
     * know the start); arg2 = the kernel's name id as the GPU ran it (CUPTI;
     * 0 when unknown, format 2). PI_GPU_TIME_PART in flags: one of several
     * pieces of GPU work of the same call (a graph launch) */
    PI_REC_GPU_TIME = 20,
    /* how GPU time is measured in this process: arg0 = enum
     * pi_gpu_timing_source, arg1 = error code that ruled out the better
     * source, arg2 = string id of the reason */
    PI_REC_GPU_TIMING = 21,
    /* an NVTX range: dur, arg0 = name string id, arg1 = nesting depth */
    PI_REC_NVTX_RANGE = 22,
    /* a capture window opened (arg0 = 1) or closed (arg0 = 0) on request;
     * on opening, arg1 = 1 when the allocations live at that moment follow
     * complete (as live_at_window_start allocations) */
    PI_REC_CAPTURE = 23,
    /* Format 2. A loaded module that call stacks name: written like a
     * string (arg0 = id in the strings' id space, arg1 = length, the bytes
     * in continuation slots): struct pi_module_def, then the build id, then
     * the path. */
    PI_REC_MODULE = 24,
    /* A call stack, written like a string (arg0 = id, arg1 = length): an
     * array of struct pi_stack_frame, Python frames first (innermost
     * first), then native frames (innermost first). CUDA records name it
     * by PI_CUDA_STACK. */
    PI_REC_STACK = 25,
    /* The call site of an earlier record of the same thread, read after
     * that record was written (Python frames read at the interpreter's
     * next safe point) or kept apart from it (sampled launches, waits):
     * ts = that record's ts, arg0 = stack id, arg1 = PI_CALL_SITE_OF(kind,
     * flags, detail) of that record (detail: the wait kind of a PI_REC_WAIT,
     * else 0), arg2 = its key: the pointer (PI_REC_GPU_ALLOC),
     * the kernel name id (PI_REC_GPU_LAUNCH), the duration in ticks
     * (PI_REC_IO, PI_REC_WAIT). flags: enum pi_call_site_flag. */
    PI_REC_CALL_SITE = 26,
    /* How Python frames are read in this process, written once when the
     * interpreter is found: arg0 = its PY_VERSION_HEX, arg1 = enum
     * pi_python_frames, arg2 = string id saying why (when frames are not
     * read, or only in part). */
    PI_REC_PYTHON = 27,
    /* the reserve of a stream-ordered memory pool (cudaMallocAsync), read
     * from the driver: arg0 = pool handle, arg1 = bytes reserved now, arg2 =
     * the most reserved since the pool's high-water mark was last reset;
     * flags = device. Format 2. */
    PI_REC_GPU_POOL = 28,
    /* Where the main thread's Python code spent a span of wall time: ts =
     * the span's start (the previous sample), dur = its length, arg0 = the
     * stack id of the Python frames found at its end (read at the
     * interpreter's safe point, so a span spent in one call of native
     * code, GIL released or not, goes to the line that made the call);
     * arg0 = 0: no Python frame (the interpreter starting or ending), or
     * with arg1 = 1 frames that could not be kept (the stack table was
     * full); flags = PI_PY_SAMPLE_CPU: arg2 = the main thread's CPU time
     * over the span, in nanoseconds (format 10). Format 3. */
    PI_REC_PY_SAMPLE = 29,
    /* A sem_post while a thread waited on the semaphore (the post wakes it):
     * arg0 = the semaphore's address, as in the waiter's PI_REC_WAIT. Python
     * hands a queue's item over this way (Condition.notify releases the
     * waiter's lock), so a wait is matched to the thread that ended it.
     * Format 4. */
    PI_REC_WAKE = 30,
    /* An NCCL communicator made, split or ended (format 5): dur = host time
     * of the call, flags = PI_NCCL_COMM_FLAGS(enum pi_nccl_comm_op, failed),
     * arg0 = the communicator handle, arg1 = a hash of the unique id the
     * ranks share (ncclCommSplit: of the parent's hash, color and key;
     * 0 when not known), arg2 = PI_NCCL_RANKS(rank, number of ranks). One
     * record per communicator made by ncclCommInitAll. */
    PI_REC_NCCL_COMM = 31,
    /* An NCCL collective, point-to-point call or group bracket (format 5):
     * dur = host time of the call, flags = PI_NCCL_FLAGS(enum pi_nccl_func,
     * ncclDataType_t, bits), arg0 = count of elements as the call gave it
     * (all-gather: per rank), arg1 = the communicator handle, arg2 =
     * PI_NCCL_WHERE(stream id, ncclRedOp_t, peer or root). The kernels it
     * launches are PI_REC_GPU_LAUNCH records of the same thread inside its
     * span. */
    PI_REC_COLLECTIVE = 32,
    /* Format 6, summary mode. The records of one kind and subject (a
     * kernel, a copy direction, a file, a thread's waits, ...) of one
     * thread over one interval, aggregated in the process instead of
     * written one by one: ts = the first one's start, dur = up to the last
     * one's end, arg0 = how many, arg1 = the length of what follows in
     * continuation slots (like a string): struct pi_summary_body, then
     * bucket_count PI_SUMMARY_BUCKET words (from format 12, bucket_count
     * buckets as summary_buckets.h writes them). */
    PI_REC_SUMMARY = 33,
    /* Format 6, summary mode: arg0 = enum pi_detail_event. Records
     * between a REPLAY_BEGIN and its REPLAY_END come from the flight ring
     * (the last seconds before a trigger): full detail of records the
     * summaries already count. A WINDOW record closes a detail window: ts,
     * dur = its span, arg1 = enum pi_detail_reason, arg2 = the slow step's
     * duration in ns (PI_DETAIL_SLOW_STEP; its threshold in the flags'
     * word is not kept: the step's own records say it). Inside a window
     * the records that summaries would count are written in full instead. */
    PI_REC_DETAIL = 34,
    /* Format 7. A thread's CPU time (ns, the kernel's thread CPU clock, as
     * PI_REC_THREAD_EXIT counts it): at the edge of the recording, one record
     * for each thread of the process as a capture window opens or closes, or
     * as a library loaded by attach starts; and the main thread's beside each
     * process sample. arg0 = the CPU time, arg1 = PI_THREAD_CPU_OPENING,
     * _CLOSING or _SAMPLE, arg2 = the thread's tid (the record's own tid is
     * the thread that read it, 0 for the writer). */
    PI_REC_THREAD_CPU = 35,
    /* Format 8, by the writer: the process's proportional set size (each
     * page it maps divided by the number of processes that map it), from
     * /proc/self/smaps_rollup, at most once a second and less often where
     * the read is costly (preload/core/process_sample.h). arg0 = PSS bytes,
     * arg1 = RSS bytes of the same walk of the page tables, arg2 = the
     * read's cost, ns of the writer's CPU time. The processes' PSS add up;
     * their RSS count a page shared by a fork child and its parent once in
     * each. */
    PI_REC_PROC_PSS = 36,
    /* Format 9, by the writer with its samples, the first reading and then
     * whenever the count changes: arg0 = the OOM kills of the process's
     * memory cgroup since it was made (cgroup v2 memory.events, v1
     * memory.oom_control), arg1 = the cgroup's memory limit in bytes (0:
     * none), arg2 = its memory in use then. A process the OOM killer takes
     * writes nothing more: the others of its cgroup see the count rise. */
    PI_REC_MEMORY_CGROUP = 37,
    /* Format 9, as the process ends (exit, _exit, a fatal signal): the end of
     * what it wrote to its standard error, its last words. arg0 = string id
     * of the bytes kept (at most 4096, the last ones), arg1 = bytes it wrote
     * to fd 2 in all, arg2 = bytes kept. */
    PI_REC_STDERR_TAIL = 38,
    /* Format 9, right after a device allocation that failed (its record has
     * PI_FLAG_FAILED and, from format 9, its call site): what the device had
     * then, by cuMemGetInfo. arg0 = free bytes, arg1 = total bytes, arg2 =
     * the device. */
    PI_REC_DEVICE_MEMORY = 39,
    /* Format 9, by the thread a fatal signal was delivered to, before its
     * process's end record: the signal and where it came from. arg0 = the
     * signal | (uint32_t)si_code << 32; arg1 = with PI_SIGNAL_SENT, the
     * sender's pid | its uid << 32 (kill, tgkill, sigqueue, abort: si_code
     * <= 0), with PI_SIGNAL_FAULT the faulting address, else 0. A
     * PI_REC_CALL_SITE may follow with the thread's Python and native frames,
     * read after the rest of the trace is out (a broken stack may fault), and
     * never when the signal came in the profiler's own code. */
    PI_REC_FATAL_SIGNAL = 40,
    /* Format 9, in a parent: a child process it reaped (wait, waitpid, wait4,
     * waitid), the only account of a child that ended where no code of its
     * own ran (SIGKILL, the OOM killer). arg0 = the child's pid, arg1 = its
     * wait status as waitpid gives it (WIFEXITED, WTERMSIG, WCOREDUMP). */
    PI_REC_CHILD_STATUS = 41,
    /* Format 10, written by the sampling thread for a thread of the
     * application that computed: the native stack found when that thread
     * had used another PROFINJECT_NATIVE_CPU_MS of CPU time. ts = the moment
     * of the sample, dur = the CPU time it stands for (the interval, more
     * when the timer overran), arg0 = the sampled thread's tid, arg1 = the
     * stack id (a PI_REC_STACK of native frames, innermost first; 0: none),
     * arg2 = 0 or why there is no stack (enum pi_native_sample_without). */
    PI_REC_NATIVE_SAMPLE = 42,
    /* Format 12. A cuBLAS or cuBLASLt matrix product, D = op(A)·op(B) (+ C)
     * with D m×n and the inner dimension k, batch of them: dur = host time
     * of the call, flags = PI_GEMM_FLAGS(enum pi_gemm_api, transposes,
     * failed), arg0 = PI_GEMM_PAIR(m, n), arg1 = PI_GEMM_PAIR(k, batch),
     * arg2 = PI_GEMM_TYPES(A's cudaDataType_t, D's, the compute type:
     * cublasComputeType_t, or for the legacy typed calls the one cuBLAS
     * documents for them). Dimensions above 2^32 - 1 are saturated. The
     * kernels it launches are PI_REC_GPU_LAUNCH records of the same thread
     * inside its span. */
    PI_REC_GEMM = 43,
    /* Format 12, once per device a process uses (its first allocation or
     * matrix product on it), by the driver's answers: arg0 =
     * PI_DEVICE_IDENTITY(ordinal, compute capability major, minor), arg1 =
     * PI_DEVICE_UNITS(multiprocessors, the largest clock in kHz), arg2 = the
     * string id of its name ("NVIDIA H100 80GB HBM3"). A query the driver
     * refused reads 0. */
    PI_REC_DEVICE = 44,
    /* Format 13, by the writer at the flush after a SIGINT, SIGTERM or SIGHUP
     * that another process sent (ended the process or its handler took it):
     * who that was, read from /proc while it may still run. arg0 = its pid,
     * arg1 = string id of its command line (arguments joined by spaces, at
     * most 256 bytes; 0: gone or not readable), arg2 = the signal. */
    PI_REC_SIGNAL_SENDER = 45,
    /* Format 14, by the thread a fatal signal ends the process from, after
     * the rest of the trace is out: a thread that was blocked then, in a
     * wait that never ended (a collective's, a lock's, a read's), one record
     * a thread. ts = when it began to wait, dur = from then to the signal,
     * arg0 = the blocked thread's tid | what it was blocked in << 32
     * (PI_IN_FLIGHT_TID, PI_IN_FLIGHT_WHAT), arg1 = the
     * object (a wait's address as in PI_REC_WAIT, an I/O call's descriptor),
     * arg2 = the stack id of its Python frames then (0: none). */
    PI_REC_WAIT_IN_FLIGHT = 46,
    /* Format 15, at the return of a Python function the library marked (a
     * span: python_spans.h): one record a call, every call, by the thread
     * that made it. ts = its entry, dur = entry to return (or exception),
     * arg0 = string id of its name ("AdamW.step") | its kind << 32
     * (enum pi_span_kind) | its depth among the thread's open spans << 40
     * | PI_SPAN_RAISED when it ended by an exception | PI_SPAN_NO_GRAD
     * (format 16) for a module call made with autograd off (PI_SPAN_NAME,
     * PI_SPAN_KIND, PI_SPAN_DEPTH), arg1 = the thread's CPU time over the
     * call (ns; PI_SPAN_CPU_UNMEASURED where the calls of that name are too
     * short for the clock's cost), arg2 = the change of the device memory
     * the process's live allocations hold over the call, as a signed 64-bit
     * number. */
    PI_REC_SPAN = 47,
    /* Format 16, just before the PI_REC_SPAN record of a call whose
     * process's resident memory was read at both ends (the calls of names
     * long enough to afford it, as for the CPU time), by the same thread:
     * ts = the call's entry (the span's ts), dur = the span's, arg0 = the
     * span's arg0, arg1 = the change of the process's resident memory over
     * the call (bytes, as a signed 64-bit number), arg2 = the resident
     * memory at its return (bytes). */
    PI_REC_SPAN_HOST_MEMORY = 48,
    /* Format 16, while a marked Python function's call is open, by its
     * thread: what the framework said of it (torch.compile's reason for
     * compiling a frame again, as dynamo's metrics give it). ts = the call's
     * entry (its span's ts), arg0 = its span's arg0 without PI_SPAN_RAISED,
     * arg1 = the string id of the words, arg2 = 0. */
    PI_REC_SPAN_NOTE = 49,
    PI_REC_KIND_COUNT
};

/* PI_REC_NATIVE_SAMPLE arg2: a sample without a stack */
enum pi_native_sample_without {
    PI_NATIVE_IN_PROFILER = 1, /* the thread ran the profiler's own code: not walked */
    PI_NATIVE_LOST = 2,        /* samples the ring had no room for (arg0 0, dur all of them) */
    PI_NATIVE_IN_LOADER = 3,   /* the loader's list of modules was locked: not walked */
};

/* PI_REC_PY_SAMPLE flags */
enum pi_py_sample_flag {
    PI_PY_SAMPLE_CPU = 1u << 0, /* arg2 holds the main thread's CPU time over the span */
};

/* PI_REC_FATAL_SIGNAL flags: what arg1 holds */
enum pi_signal_flag {
    PI_SIGNAL_SENT = 1u << 0,  /* a process sent it: arg1 is its pid and uid */
    PI_SIGNAL_FAULT = 1u << 1, /* the thread's own fault: arg1 is the address */
    /* Format 13: a SIGINT, SIGTERM or SIGHUP that the application's own handler took (Python's
     * KeyboardInterrupt, torchrun's agent), written by the writer at its next flush, ts when
     * it came; the process went on, to end as its handler chose. The first of those since
     * the previous flush, one a flush at most. */
    PI_SIGNAL_HANDLED = 1u << 2,
};

/* pi_signal_is_stop - whether @sig is one a person or a scheduler stops a job with (Ctrl-C,
 * `timeout`, `kill`, a closed terminal): the signals PI_SIGNAL_HANDLED and
 * PI_REC_SIGNAL_SENDER are written for, and the ones the analyzer calls a stop */
static inline int pi_signal_is_stop(long sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/* PI_REC_DETAIL arg0 */
enum pi_detail_event {
    PI_DETAIL_REPLAY_BEGIN = 1,
    PI_DETAIL_REPLAY_END = 2,
    PI_DETAIL_WINDOW = 3,
};

/* PI_REC_DETAIL arg1 of a PI_DETAIL_WINDOW: why the detail was kept */
enum pi_detail_reason {
    PI_DETAIL_SLOW_STEP = 1, /* a step ended slower than the p99 of the steps before */
    PI_DETAIL_REQUESTED = 2, /* a capture window asked for (ctl capture, --duration) */
};

/*
 * What follows a PI_REC_SUMMARY: the records it stands for, by a template
 * of them (their kind, flags and the arguments that name the subject, the
 * others 0) and their figures. Durations are CLOCK_MONOTONIC ns (the
 * recorder converts ticks with its measured rate); the buckets are those
 * of histogram_buckets.h, over durations in ns.
 *   PI_REC_GPU_LAUNCH: key = {0, kernel name id, 0}, flags the launch's
 *   PI_REC_GPU_COPY:   key = {size class low bound in bytes, 0, 0}
 *   PI_REC_GPU_TIME:   key = {kind of the call timed (PI_REC_GPU_LAUNCH or
 *                      PI_REC_GPU_COPY), its kernel name id or copy flags,
 *                      0}; 0, 0: its call was not seen
 *   PI_REC_IO:         key = {0, 0, path string id}, flags the calls'; from
 *                      format 11, a fork child's regular files are counted
 *                      by directory: the id of the directory's path, which
 *                      ends in '/'
 *   PI_REC_WAIT:       key = {wait kind, address of the object, 0}
 * Summarised are: all launches and GPU times, copies but the main
 * thread's blocking ones; I/O on regular files; the other threads' I/O but
 * their waits for a pipe or socket and their pipe reads; the waits of
 * threads other than the main one. The
 * rest (what steps are made of: the main thread's waits and pipe and
 * socket I/O, the pin-memory thread's receipts, its blocking copies;
 * allocations, synchronisations, ...) stays in full: summary_policy.h.
 */
struct pi_summary_body {
    uint16_t kind;  /* enum pi_record_kind of the records summarised */
    uint16_t flags; /* their flags */
    uint32_t bucket_count;
    uint64_t key[3];
    uint64_t total_ns; /* sum of their durations */
    uint64_t min_ns, max_ns;
    uint64_t bytes; /* bytes they moved (I/O results, copies) */
};

/* A bucket of a summary: its index (below PI_BUCKET_COUNT) and its count. From format 12 the
 * body is followed by bytes, not words: summary_buckets.h. */
#define PI_SUMMARY_BUCKET(index, count) ((uint64_t)(index) | ((uint64_t)(count) << 16))
#define PI_SUMMARY_BUCKET_INDEX(word) ((uint32_t)((word) & 0xffffu))
#define PI_SUMMARY_BUCKET_COUNT(word) ((word) >> 16)
/* Longest summary body: every bucket of histogram_buckets.h used (as words; as LEB128
 * bytes (format 12), at most 2 for an index's step and 5 for a count: fewer) */
#define PI_MAX_SUMMARY_LEN (sizeof(struct pi_summary_body) + 3776u * sizeof(uint64_t))

enum pi_lost_reason {
    PI_LOST_NO_BUFFER = 1,  /* the writer fell behind; the application ran on */
    PI_LOST_BEFORE_INIT = 2,
    PI_LOST_WRITE_FAILED = 3,
    PI_LOST_GPU_TIME = 4, /* GPU durations of recorded calls that never arrived (format 2) */
    PI_LOST_STRINGS = 5,  /* names, paths or stacks not kept: the string table was full, so the
                           * records that name them say 0 (format 3) */
};

enum pi_end_reason {
    PI_END_EXIT = 1,   /* exit() or return from main */
    PI_END__EXIT = 2,  /* _exit() */
    PI_END_SIGNAL = 3, /* arg0 holds the signal number */
};

/* The fixed part of a PI_REC_MODULE definition. */
struct pi_module_def {
    uint64_t load_base;       /* what the dynamic loader added to the module's addresses */
    uint16_t build_id_length; /* bytes of GNU build id that follow (0: none) */
    uint16_t path_length;     /* bytes of path after the build id, not NUL-terminated */
    uint32_t reserved;
};

enum pi_frame_type {
    PI_FRAME_PYTHON = 1, /* ref = file string id, name = function string id, line */
    PI_FRAME_NATIVE = 2, /* ref = module id, name = dynamic symbol string id or 0, offset */
};

/* One frame of a PI_REC_STACK. A native frame's offset is the address of
 * its call instruction (the return address minus one) minus the module's
 * load base: an address in the module's own ELF address space, so it can
 * be named offline from the module or its debug file. */
struct pi_stack_frame {
    uint8_t type; /* enum pi_frame_type */
    uint8_t reserved[3];
    uint32_t ref;
    uint32_t name;
    uint32_t line;
    uint64_t offset;
};

/* PI_REC_CALL_SITE arg1: the kind, flags and detail of the record it completes. */
#define PI_CALL_SITE_OF(kind, flags, detail)                                                       \
    ((uint64_t)(kind) | ((uint64_t)(flags) << 16) | ((uint64_t)((detail) & 0xffu) << 32))
#define PI_CALL_SITE_KIND(arg) ((unsigned)((arg) & 0xffffu))
#define PI_CALL_SITE_FLAGS(arg) ((unsigned)(((arg) >> 16) & 0xffffu))
#define PI_CALL_SITE_DETAIL(arg) ((unsigned)(((arg) >> 32) & 0xffu))

enum pi_call_site_flag {
    /* the Python frames were read at the interpreter's next safe point of
     * the thread (Py_AddPendingCall), not inside the call itself */
    PI_CALL_SITE_DEFERRED = 1u << 1,
    /* a sampled launch of a thread that had no Python frames to give
     * (autograd's engine threads): the stack is its native frames only */
    PI_CALL_SITE_NATIVE = 1u << 2,
};

/* PI_REC_PYTHON arg1: where Python frames come from in this process. */
enum pi_python_frames {
    PI_PYTHON_FRAMES_OFF = 0,  /* not read (arg2 says why) */
    PI_PYTHON_FRAMES_HELD = 1, /* read in calls made while holding the GIL */
    /* and, for the main thread's calls made without it, at its next safe point */
    PI_PYTHON_FRAMES_HELD_AND_DEFERRED = 2,
};

/* PI_REC_THREAD_EXIT arg1 */
#define PI_THREAD_CPU_MEASURED 1u

/* PI_REC_THREAD_CPU arg1: which edge of the recording, or a sample */
#define PI_THREAD_CPU_CLOSING 0u
#define PI_THREAD_CPU_OPENING 1u
#define PI_THREAD_CPU_SAMPLE 2u
/* A sample flagged PI_FLAG_RUN_DELAY carries in arg2's upper 32 bits the thread's time ready
 * to run and waiting for a CPU so far (the kernel's schedstat run delay), in milliseconds; the
 * lower 32 bits are the thread, as in every sample (readers that know no flag read those). */

/* Record flag bits. */
enum pi_record_flag {
    PI_FLAG_FAILED = 1u << 0, /* the intercepted call returned an error */
    PI_FLAG_RUN_DELAY = 1u << 1, /* a PI_THREAD_CPU_SAMPLE carries its run delay (arg2) */
};

/* What a file descriptor is, found once per descriptor. */
enum pi_fd_class {
    PI_FD_UNKNOWN = 0,
    PI_FD_FILE = 1,
    PI_FD_PIPE = 2,
    PI_FD_SOCKET = 3,
    PI_FD_DEVICE = 4,
    PI_FD_TTY = 5,
    PI_FD_OTHER = 6, /* directories, eventfd, epoll, ... */
    PI_FD_CLASS_COUNT
};

/*
 * The I/O operations of a PI_REC_IO record, each defined once: the recorder
 * and the analyzer derive the enum, the names and every predicate below
 * from this table, so that an operation is added whole or not at all. A
 * row is X(NAME, "name", traits); its number in the format is its place in
 * the list (from 1): append only.
 *   PI_IO_MOVES_BYTES  arg1 holds the bytes moved (open has a descriptor
 *                      there, mmap a length mapped, poll a ready count)
 *   PI_IO_WAITS_READY  waits until descriptors are ready (poll, select, epoll)
 *   PI_IO_RECEIVES     takes the bytes a sender sends: on a pipe or a socket
 *                      it blocks until one comes (a data loader's batch)
 *   PI_IO_OPENS        opens a file by its path (arg2 = the path)
 */
#define PI_IO_MOVES_BYTES (1u << 0)
#define PI_IO_WAITS_READY (1u << 1)
#define PI_IO_RECEIVES (1u << 2)
#define PI_IO_OPENS (1u << 3)
#define PI_IO_OPERATIONS(X)                                                                        \
    X(OPEN, "open", PI_IO_OPENS) /* arg1 = fd; creat and openat too */                             \
    X(CLOSE, "close", 0)                                                                           \
    X(READ, "read", PI_IO_MOVES_BYTES | PI_IO_RECEIVES)                                            \
    X(PREAD, "pread", PI_IO_MOVES_BYTES)                                                           \
    X(READV, "readv", PI_IO_MOVES_BYTES | PI_IO_RECEIVES)                                          \
    X(PREADV, "preadv", PI_IO_MOVES_BYTES)                                                         \
    X(WRITE, "write", PI_IO_MOVES_BYTES)                                                           \
    X(PWRITE, "pwrite", PI_IO_MOVES_BYTES)                                                         \
    X(WRITEV, "writev", PI_IO_MOVES_BYTES)                                                         \
    X(PWRITEV, "pwritev", PI_IO_MOVES_BYTES)                                                       \
    X(RECV, "recv", PI_IO_MOVES_BYTES | PI_IO_RECEIVES)                                            \
    X(RECVFROM, "recvfrom", PI_IO_MOVES_BYTES | PI_IO_RECEIVES)                                    \
    X(RECVMSG, "recvmsg", PI_IO_MOVES_BYTES | PI_IO_RECEIVES)                                      \
    X(SEND, "send", PI_IO_MOVES_BYTES)                                                             \
    X(SENDTO, "sendto", PI_IO_MOVES_BYTES)                                                         \
    X(SENDMSG, "sendmsg", PI_IO_MOVES_BYTES)                                                       \
    X(POLL, "poll", PI_IO_WAITS_READY) /* arg0 = first fd polled, arg1 = ready count */            \
    X(PPOLL, "ppoll", PI_IO_WAITS_READY)                                                           \
    X(SELECT, "select", PI_IO_WAITS_READY)                                                         \
    X(PSELECT, "pselect", PI_IO_WAITS_READY)                                                       \
    X(EPOLL_WAIT, "epoll_wait", PI_IO_WAITS_READY)                                                 \
    X(MMAP, "mmap", 0) /* arg1 = length mapped */                                                  \
    X(FOPEN, "fopen", PI_IO_OPENS)                                                                 \
    X(FCLOSE, "fclose", 0)                                                                         \
    X(FREAD, "fread", PI_IO_MOVES_BYTES) /* arg1 = bytes */                                        \
    X(FWRITE, "fwrite", PI_IO_MOVES_BYTES)                                                         \
    X(PREADV2, "preadv2", PI_IO_MOVES_BYTES) /* format 3 */                                        \
    X(PWRITEV2, "pwritev2", PI_IO_MOVES_BYTES)                                                     \
    /* arg1 = bytes of all the messages received (their msg_len) */                                \
    X(RECVMMSG, "recvmmsg", PI_IO_MOVES_BYTES | PI_IO_RECEIVES)                                    \
    X(SENDMMSG, "sendmmsg", PI_IO_MOVES_BYTES) /* arg1 = bytes of all the messages sent */         \
    /* arg0 = the fd read from, arg1 = bytes copied in the kernel */                               \
    X(COPY_FILE_RANGE, "copy_file_range", PI_IO_MOVES_BYTES)                                       \
    X(SENDFILE, "sendfile", PI_IO_MOVES_BYTES) /* arg0 = the fd read from, arg1 = bytes sent */

#define PI_IO_OP_ENUM(NAME, name, traits) PI_IO_##NAME,
enum pi_io_op { PI_IO_NONE = 0, PI_IO_OPERATIONS(PI_IO_OP_ENUM) PI_IO_OP_COUNT };
#undef PI_IO_OP_ENUM

/* pi_io_traits - the PI_IO_MOVES_BYTES... bits of @op; 0 for an unknown one */
static inline unsigned pi_io_traits(unsigned op)
{
    switch (op) {
#define PI_IO_OP_TRAITS(NAME, name, traits) \
    case PI_IO_##NAME:                      \
        return (traits);
        PI_IO_OPERATIONS(PI_IO_OP_TRAITS)
#undef PI_IO_OP_TRAITS
    default:
        return 0;
    }
}

/* pi_io_op_text - @op's name ("read", "recv"); NULL for an unknown one */
static inline const char *pi_io_op_text(unsigned op)
{
#define PI_IO_OP_NAME(NAME, name, traits) [PI_IO_##NAME] = name,
    static const char *const names[PI_IO_OP_COUNT] = {PI_IO_OPERATIONS(PI_IO_OP_NAME)};
#undef PI_IO_OP_NAME
    return op < PI_IO_OP_COUNT ? names[op] : NULL;
}

/* pi_io_moves_bytes - whether a PI_REC_IO of @op has the bytes moved in arg1 */
static inline int pi_io_moves_bytes(unsigned op)
{
    return (pi_io_traits(op) & PI_IO_MOVES_BYTES) != 0;
}

/* pi_io_opens - whether @op opens a file by its path */
static inline int pi_io_opens(unsigned op)
{
    return (pi_io_traits(op) & PI_IO_OPENS) != 0;
}

/* pi_io_waits_ready - whether @op waits for descriptors to be ready */
static inline int pi_io_waits_ready(unsigned op)
{
    return (pi_io_traits(op) & PI_IO_WAITS_READY) != 0;
}

/* pi_io_is_data_wait - whether an @op on a @fd_class descriptor waits for
 * what another process or thread sends: a readiness wait or a receive on a
 * pipe or a socket (a training loop's wait for a batch) */
static inline int pi_io_is_data_wait(unsigned op, unsigned fd_class)
{
    return (fd_class == PI_FD_PIPE || fd_class == PI_FD_SOCKET) &&
           (pi_io_traits(op) & (PI_IO_WAITS_READY | PI_IO_RECEIVES)) != 0;
}

/* pi_io_is_pipe_receipt - whether an @op on a @fd_class descriptor takes
 * bytes from a pipe (a batch's message to the loop or the pin-memory thread) */
static inline int pi_io_is_pipe_receipt(unsigned op, unsigned fd_class)
{
    return fd_class == PI_FD_PIPE && (pi_io_traits(op) & PI_IO_RECEIVES) != 0;
}

/* PI_REC_IO flags: bit 0 failed, bits 4-7 fd class, bits 8-15 operation. */
#define PI_IO_FLAGS(op, fd_class, failed) \
    ((uint16_t)(((op) << 8) | ((fd_class) << 4) | ((failed) ? PI_FLAG_FAILED : 0)))
#define PI_IO_OP(flags) ((unsigned)(flags) >> 8)
#define PI_IO_CLASS(flags) (((unsigned)(flags) >> 4) & 0xfu)

/* The CUDA calls intercepted; the id goes into the record's flags. Append only.
 * live_at_window_start is no call: a PI_REC_GPU_ALLOC of dur 0 for memory
 * already allocated when a capture window opened. */
#define PI_CUDA_APIS(X)                                                                           \
    X(cudaMalloc) X(cudaFree) X(cudaMallocAsync) X(cudaFreeAsync) X(cudaMallocManaged)            \
    X(cudaMallocHost) X(cudaHostAlloc) X(cudaFreeHost) X(cudaHostRegister) X(cudaHostUnregister)  \
    X(cudaMemcpy) X(cudaMemcpyAsync) X(cudaMemcpy2D) X(cudaMemcpy2DAsync) X(cudaMemset)           \
    X(cudaMemsetAsync) X(cudaLaunchKernel) X(cudaLaunchKernelExC) X(cudaGraphLaunch)              \
    X(cudaDeviceSynchronize) X(cudaStreamSynchronize) X(cudaEventSynchronize)                     \
    X(cudaStreamWaitEvent) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync)        \
    X(cuMemAllocManaged) X(cuMemAllocHost) X(cuMemHostAlloc) X(cuMemFreeHost)                     \
    X(cuMemHostRegister) X(cuMemCreate) X(cuMemRelease) X(cuMemMap) X(cuMemUnmap)                 \
    X(cuMemcpy) X(cuMemcpyAsync) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD)                  \
    X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuLaunchKernel)              \
    X(cuLaunchKernelEx) X(cuGraphLaunch) X(cuStreamSynchronize) X(cuCtxSynchronize)               \
    X(cuEventSynchronize) X(live_at_window_start) X(__cudaLaunchKernel)                          \
    X(cudaMallocFromPoolAsync) X(cuMemAllocFromPoolAsync)

#define PI_CUDA_API_ENUM(name) PI_CUDA_API_##name,
enum pi_cuda_api { PI_CUDA_API_NONE = 0, PI_CUDA_APIS(PI_CUDA_API_ENUM) PI_CUDA_API_COUNT };
#undef PI_CUDA_API_ENUM

/* pi_cuda_api_text - @api's name ("cudaStreamSynchronize"); NULL for an unknown one */
static inline const char *pi_cuda_api_text(unsigned api)
{
#define PI_CUDA_API_NAME(name) [PI_CUDA_API_##name] = #name,
    static const char *const names[PI_CUDA_API_COUNT] = {PI_CUDA_APIS(PI_CUDA_API_NAME)};
#undef PI_CUDA_API_NAME
    return api < PI_CUDA_API_COUNT ? names[api] : NULL;
}

/* CUDA record flags: bit 0 failed, 1 driver level, 2 nested in a runtime
 * call (its parent has the same meaning: not counted twice), 3 async,
 * 4-6 subtype, 7 pinned host memory, 8-15 enum pi_cuda_api. */
#define PI_CUDA_DRIVER (1u << 1)
#define PI_CUDA_NESTED (1u << 2)
#define PI_CUDA_ASYNC (1u << 3)
#define PI_CUDA_PINNED (1u << 7)
#define PI_CUDA_FLAGS(api, subtype, bits) ((uint16_t)(((api) << 8) | ((subtype) << 4) | (bits)))
#define PI_CUDA_API(flags) ((unsigned)(flags) >> 8)
#define PI_CUDA_SUBTYPE(flags) (((unsigned)(flags) >> 4) & 7u)
#define PI_CUDA_WHERE(stream, device, stack)                                                       \
    ((uint64_t)(uint32_t)(stream) | ((uint64_t)((device) & 0xff) << 32) | ((uint64_t)(stack) << 40))
#define PI_CUDA_STREAM(where) ((uint32_t)(where))
#define PI_CUDA_DEVICE(where) ((unsigned)((where) >> 32) & 0xffu)
#define PI_CUDA_STACK(where) ((uint32_t)((where) >> 40))

enum pi_gpu_alloc_kind {
    PI_GPU_ALLOC_DEVICE = 1,  /* cudaMalloc, cuMemAlloc */
    PI_GPU_ALLOC_POOL = 2,    /* stream-ordered: cudaMallocAsync */
    PI_GPU_ALLOC_MANAGED = 3, /* unified memory */
    PI_GPU_ALLOC_PINNED = 4,  /* page-locked host memory */
    PI_GPU_ALLOC_REGISTERED = 5, /* host memory registered with the driver */
    PI_GPU_ALLOC_VMM = 6,     /* physical memory of the virtual memory API (cuMemCreate) */
    PI_GPU_ALLOC_KIND_COUNT
};

/* pi_gpu_alloc_on_host - whether memory of @kind (enum pi_gpu_alloc_kind) is the host's:
 * page-locked or registered, no part of any device's memory */
static inline int pi_gpu_alloc_on_host(unsigned kind)
{
    return kind == PI_GPU_ALLOC_PINNED || kind == PI_GPU_ALLOC_REGISTERED;
}

enum pi_gpu_copy_kind {
    PI_GPU_MEMSET = 0,
    PI_GPU_COPY_HTOD = 1,
    PI_GPU_COPY_DTOH = 2,
    PI_GPU_COPY_DTOD = 3,
    PI_GPU_COPY_HTOH = 4,
    PI_GPU_COPY_DEFAULT = 5, /* direction inferred by the driver (unified addressing) */
    PI_GPU_COPY_KIND_COUNT
};

enum pi_gpu_launch_kind { PI_GPU_KERNEL = 1, PI_GPU_KERNEL_EX = 2, PI_GPU_GRAPH = 3 };

enum pi_gpu_sync_kind {
    PI_GPU_SYNC_DEVICE = 1,
    PI_GPU_SYNC_STREAM = 2,
    PI_GPU_SYNC_EVENT = 3,
    PI_GPU_SYNC_STREAM_WAIT = 4, /* queued, the host does not block */
};

/* PI_REC_GPU_TIME flags */
#define PI_GPU_TIME_PART (1u << 1)

/* PI_REC_NCCL_COMM: what happened to the communicator. Append only. */
enum pi_nccl_comm_op {
    PI_NCCL_COMM_INIT_RANK = 1,   /* ncclCommInitRank */
    PI_NCCL_COMM_INIT_CONFIG = 2, /* ncclCommInitRankConfig */
    PI_NCCL_COMM_INIT_ALL = 3,    /* ncclCommInitAll: one record per communicator */
    PI_NCCL_COMM_SPLIT = 4,       /* ncclCommSplit: arg0 is the new communicator */
    PI_NCCL_COMM_FINALIZE = 5,
    PI_NCCL_COMM_DESTROY = 6,
    PI_NCCL_COMM_ABORT = 7,
    PI_NCCL_COMM_INIT_SCALABLE = 8, /* ncclCommInitRankScalable */
    PI_NCCL_COMM_OP_COUNT
};
#define PI_NCCL_COMM_FLAGS(op, failed) ((uint16_t)(((op) << 8) | ((failed) ? PI_FLAG_FAILED : 0)))
#define PI_NCCL_COMM_OP(flags) ((unsigned)(flags) >> 8)
#define PI_NCCL_RANKS(rank, nranks) ((uint64_t)(uint32_t)(rank) | ((uint64_t)(uint32_t)(nranks) << 32))
#define PI_NCCL_RANK(arg) ((int32_t)(uint32_t)(arg))
#define PI_NCCL_NRANKS(arg) ((int32_t)(uint32_t)((arg) >> 32))

/* PI_REC_COLLECTIVE: the NCCL function. Append only. */
enum pi_nccl_func {
    PI_NCCL_ALL_REDUCE = 1,
    PI_NCCL_BROADCAST = 2, /* ncclBroadcast and the older ncclBcast (in place) */
    PI_NCCL_REDUCE = 3,
    PI_NCCL_ALL_GATHER = 4,
    PI_NCCL_REDUCE_SCATTER = 5, /* count: elements each rank receives */
    PI_NCCL_ALL_TO_ALL = 6,     /* count: elements sent to each peer */
    PI_NCCL_SEND = 7,
    PI_NCCL_RECV = 8,
    PI_NCCL_GROUP_START = 9, /* no count, communicator or stream */
    PI_NCCL_GROUP_END = 10,  /* launches what the group queued: its kernels are inside */
    PI_NCCL_FUNC_COUNT
};
/* PI_REC_COLLECTIVE flags: bit 0 failed, bit 1 inside a group (its kernels
 * are launched by the group's end), bits 4-7 ncclDataType_t, 8-15 enum
 * pi_nccl_func. */
#define PI_NCCL_GROUPED (1u << 1)
#define PI_NCCL_FLAGS(func, datatype, bits)                                                        \
    ((uint16_t)(((func) << 8) | (((datatype) & 0xfu) << 4) | (bits)))
#define PI_NCCL_FUNC(flags) ((unsigned)(flags) >> 8)
#define PI_NCCL_DATATYPE(flags) (((unsigned)(flags) >> 4) & 0xfu)
/* arg2: the stream (ids as PI_CUDA_STREAM), the reduction (ncclRedOp_t;
 * 0xff: a custom one, none for functions that do not reduce) and the peer
 * (send, receive) or root (broadcast, reduce) plus one, 0: none */
#define PI_NCCL_WHERE(stream, redop, peer_plus_one)                                                \
    ((uint64_t)(uint32_t)(stream) | ((uint64_t)((redop) & 0xffu) << 32) |                          \
     ((uint64_t)((peer_plus_one) & 0xffffffu) << 40))
#define PI_NCCL_STREAM(where) ((uint32_t)(where))
#define PI_NCCL_REDOP(where) ((unsigned)((where) >> 32) & 0xffu)
#define PI_NCCL_PEER(where) ((int32_t)(((where) >> 40) & 0xffffffu) - 1)

/* PI_REC_GEMM: the function called. Append only. */
enum pi_gemm_api {
    PI_GEMM_SGEMM = 1,       /* cublasSgemm_v2 (and _64) */
    PI_GEMM_DGEMM = 2,       /* cublasDgemm_v2 (and _64) */
    PI_GEMM_HGEMM = 3,       /* cublasHgemm (and _64) */
    PI_GEMM_GEMM_EX = 4,     /* cublasGemmEx (and _64) */
    PI_GEMM_SGEMM_EX = 5,    /* cublasSgemmEx (and _64): fp32 compute, A/B/C typed */
    PI_GEMM_STRIDED = 6,     /* cublas{S,D,H}gemmStridedBatched (and _64) */
    PI_GEMM_STRIDED_EX = 7,  /* cublasGemmStridedBatchedEx (and _64) */
    PI_GEMM_BATCHED = 8,     /* cublas{S,D,H}gemmBatched (and _64): arrays of pointers */
    PI_GEMM_BATCHED_EX = 9,  /* cublasGemmBatchedEx (and _64) */
    PI_GEMM_LT_MATMUL = 10,  /* cublasLtMatmul */
    PI_GEMM_API_COUNT
};
/* PI_REC_GEMM flags: bit 0 failed, bit 1 A transposed (or conjugate
 * transposed), bit 2 B transposed, bits 8-15 enum pi_gemm_api. */
#define PI_GEMM_TRANS_A (1u << 1)
#define PI_GEMM_TRANS_B (1u << 2)
#define PI_GEMM_FLAGS(api, trans_bits, failed)                                                    \
    ((uint16_t)(((api) << 8) | ((trans_bits) & 6u) | ((failed) ? PI_FLAG_FAILED : 0)))
#define PI_GEMM_API(flags) ((unsigned)(flags) >> 8)
#define PI_GEMM_SATURATE32(x) ((uint64_t)(x) > 0xffffffffull ? 0xffffffffull : (uint64_t)(x))
#define PI_GEMM_PAIR(low, high) (PI_GEMM_SATURATE32(low) | (PI_GEMM_SATURATE32(high) << 32))
#define PI_GEMM_LOW(arg) ((uint32_t)(arg))
#define PI_GEMM_HIGH(arg) ((uint32_t)((arg) >> 32))
#define PI_GEMM_TYPES(a_type, d_type, compute)                                                    \
    ((uint64_t)((a_type) & 0xffu) | ((uint64_t)((d_type) & 0xffu) << 8) |                        \
     ((uint64_t)((compute) & 0xffu) << 16))
#define PI_GEMM_A_TYPE(arg) ((unsigned)(arg) & 0xffu)
#define PI_GEMM_D_TYPE(arg) ((unsigned)((arg) >> 8) & 0xffu)
#define PI_GEMM_COMPUTE(arg) ((unsigned)((arg) >> 16) & 0xffu)

/* PI_REC_DEVICE arg0 and arg1 */
#define PI_DEVICE_IDENTITY(ordinal, major, minor)                                                 \
    ((uint64_t)(uint32_t)(ordinal) | ((uint64_t)((major) & 0xffu) << 32) |                       \
     ((uint64_t)((minor) & 0xffu) << 40))
#define PI_DEVICE_ORDINAL(arg) ((uint32_t)(arg))
#define PI_DEVICE_MAJOR(arg) ((unsigned)((arg) >> 32) & 0xffu)
#define PI_DEVICE_MINOR(arg) ((unsigned)((arg) >> 40) & 0xffu)
#define PI_DEVICE_UNITS(sms, clock_khz)                                                           \
    ((uint64_t)(uint32_t)(sms) | ((uint64_t)(uint32_t)(clock_khz) << 32))
#define PI_DEVICE_SMS(arg) ((uint32_t)(arg))
#define PI_DEVICE_CLOCK_KHZ(arg) ((uint32_t)((arg) >> 32))

enum pi_gpu_timing_source {
    PI_GPU_TIMING_ABSENT = 0,
    PI_GPU_TIMING_EVENTS = 1,
    PI_GPU_TIMING_CUPTI = 2,
};

enum pi_wait_kind {
    PI_WAIT_MUTEX = 1, /* pthread_mutex_lock that did not get the lock at once */
    PI_WAIT_COND = 2,  /* pthread_cond_wait, timedwait, clockwait */
    PI_WAIT_SEM = 3,   /* sem_wait, sem_timedwait, sem_clockwait */
    PI_WAIT_SLEEP = 4, /* nanosleep, clock_nanosleep (Python's time.sleep), usleep, sleep */
    PI_WAIT_KIND_COUNT
};

/* PI_REC_WAIT_IN_FLIGHT: what the thread was blocked in, in 32 bits: a wait
 * (enum pi_wait_kind), an I/O call (PI_IO_FLAGS of its operation and its
 * descriptor's class) with PI_IN_FLIGHT_IO set, or (format 16) a CUDA call
 * that blocks until the device caught up, a synchronisation or a copy that
 * waits (the PI_CUDA_FLAGS(api, subtype, 0) of its PI_REC_GPU_SYNC or
 * PI_REC_GPU_COPY record) with PI_IN_FLIGHT_GPU set: where a collective's
 * peers never came, what its rank's host is blocked in (an NCCL kernel
 * waits on the device, not in a call). */
#define PI_IN_FLIGHT_IO (1u << 31)
#define PI_IN_FLIGHT_GPU (1u << 30)
#define PI_IN_FLIGHT_WAIT(kind) ((uint32_t)(kind))
#define PI_IN_FLIGHT_IO_CALL(op, fd_class) (PI_IN_FLIGHT_IO | PI_IO_FLAGS(op, fd_class, 0))
#define PI_IN_FLIGHT_IO_FLAGS(what) ((unsigned)(what) & 0xffffu) /* for PI_IO_OP, PI_IO_CLASS */
#define PI_IN_FLIGHT_GPU_CALL(cuda_flags) (PI_IN_FLIGHT_GPU | ((uint32_t)(cuda_flags) & 0xfff0u))
#define PI_IN_FLIGHT_GPU_FLAGS(what) ((unsigned)(what) & 0xffffu) /* for PI_CUDA_API, _SUBTYPE */
#define PI_IN_FLIGHT_TID(arg0) ((uint32_t)(arg0))
#define PI_IN_FLIGHT_WHAT(arg0) ((uint32_t)((arg0) >> 32))

/* PI_REC_SPAN: what a marked Python function is to the reports. The built-in
 * ones need no setting (python_spans.h); PI_SPAN_NAMED is a user's own
 * (PROFINJECT_SPANS, profinject run --span). */
enum pi_span_kind {
    PI_SPAN_NAMED = 0,
    PI_SPAN_OPTIMIZER_STEP = 1,  /* torch.optim: every optimizer's step */
    PI_SPAN_BACKWARD = 2,        /* torch.autograd.backward, Tensor.backward */
    PI_SPAN_DATALOADER_NEXT = 3, /* a DataLoader iterator's __next__ */
    PI_SPAN_MODULE = 4,          /* the outermost nn.Module call of a thread */
    PI_SPAN_PIPELINE = 5,        /* transformers Pipeline.__call__ */
    PI_SPAN_GENERATE = 6,        /* transformers generate() */
    PI_SPAN_TOKENIZER = 7,       /* a transformers tokenizer's __call__ */
    PI_SPAN_FROM_PRETRAINED = 8, /* transformers from_pretrained */
    PI_SPAN_COMPILE = 9,         /* a torch.compile compilation of one frame */
    PI_SPAN_GC = 10,             /* a garbage collection by Python's gc, by generation */
    /* generate()'s stopping check, made as each new token is there (its streamer's put()
     * follows it): the moments of the tokens */
    PI_SPAN_TOKEN = 11,
    PI_SPAN_KIND_COUNT
};
#define PI_SPAN_RAISED (1ull << 48)
/* format 16: an outermost module call (PI_SPAN_MODULE) made with autograd off
 * (torch.no_grad, torch.inference_mode): evaluation, inference */
#define PI_SPAN_NO_GRAD (1ull << 49)
#define PI_SPAN_CPU_UNMEASURED UINT64_MAX
#define PI_SPAN_NAME(arg0) ((uint32_t)(arg0))
#define PI_SPAN_KIND(arg0) ((unsigned)(((arg0) >> 32) & 0xffu))
#define PI_SPAN_DEPTH(arg0) ((unsigned)(((arg0) >> 40) & 0xffu))
#define PI_SPAN_ARG0(name, kind, depth, raised)                                               \
    ((uint64_t)(name) | (uint64_t)((kind) & 0xffu) << 32 | (uint64_t)((depth) & 0xffu) << 40 | \
     ((raised) ? PI_SPAN_RAISED : 0))

/*
 * One fixed-size record. Every event and every bookkeeping entry is one of
 * these (strings take continuation slots after theirs).
 */
struct pi_record {
    uint16_t kind;
    uint16_t flags;
    uint32_t tid; /* kernel thread id of the thread that made the event */
    uint64_t ts;  /* start, clock ticks */
    uint64_t dur; /* duration, clock ticks; 0 for instant events */
    uint64_t arg[3];
};

_Static_assert(sizeof(struct pi_record) == PI_RECORD_SIZE, "record size is part of the format");
_Static_assert(sizeof(struct pi_frame_header) == 16, "frame header size is part of the format");
_Static_assert(sizeof(struct pi_module_def) == 16, "module definition size is part of the format");
_Static_assert(sizeof(struct pi_stack_frame) == 24, "stack frame size is part of the format");
_Static_assert(sizeof(struct pi_summary_body) == 64, "summary body size is part of the format");

/* pi_gpu_host_waits - whether the calling thread was blocked until the GPU caught up in @r:
 * a synchronisation (not a stream's queued wait on an event) or a synchronous copy, made by
 * the application itself (not nested in another recorded call) */
static inline int pi_gpu_host_waits(const struct pi_record *r)
{
    unsigned subtype = PI_CUDA_SUBTYPE(r->flags);
    int blocks = (r->kind == PI_REC_GPU_SYNC && subtype != 0 && subtype != PI_GPU_SYNC_STREAM_WAIT) ||
                 (r->kind == PI_REC_GPU_COPY && !(r->flags & PI_CUDA_ASYNC));
    return blocks && !(r->flags & PI_CUDA_NESTED);
}

/* pi_record_is_definition - whether a record defines an id and carries its
 * bytes in continuation slots (strings, and from format 2 modules and stacks) */
static inline int pi_record_is_definition(uint16_t kind)
{
    return kind == PI_REC_STRING || kind == PI_REC_MODULE || kind == PI_REC_STACK;
}

/* pi_record_has_continuation - whether a record of @kind is followed by
 * pi_string_slots(arg1) raw slots: definitions, and summaries (format 6) */
static inline int pi_record_has_continuation(uint16_t kind)
{
    return pi_record_is_definition(kind) || kind == PI_REC_SUMMARY;
}

/* pi_record_has_time - whether a record's ts field is a time (definitions' is not) */
static inline int pi_record_has_time(uint16_t kind)
{
    return !pi_record_is_definition(kind);
}

/* pi_kinds_of_version - one past the highest record kind a format version has */
static inline unsigned pi_kinds_of_version(unsigned version)
{
    return version < 2   ? PI_REC_CAPTURE + 1
           : version < 3 ? PI_REC_GPU_POOL + 1
           : version < 4 ? PI_REC_PY_SAMPLE + 1
           : version < 5 ? PI_REC_WAKE + 1
           : version < 6 ? PI_REC_COLLECTIVE + 1
           : version < 7 ? PI_REC_DETAIL + 1
           : version < 8 ? PI_REC_THREAD_CPU + 1
           : version < 9 ? PI_REC_PROC_PSS + 1
           : version < 12 ? PI_REC_NATIVE_SAMPLE + 1
           : version < 13 ? PI_REC_DEVICE + 1
           : version < 14 ? PI_REC_SIGNAL_SENDER + 1
           : version < 15 ? PI_REC_WAIT_IN_FLIGHT + 1
           : version < 16 ? PI_REC_SPAN + 1
                          : PI_REC_KIND_COUNT;
}

/* pi_header_string_count - how many header strings a format version has */
static inline unsigned pi_header_string_count(unsigned version)
{
    return version < 5 ? PI_HDR_CGROUP + 1 : version < 11 ? PI_HDR_IDENTITY + 1 : PI_HDR_STRING_COUNT;
}

/* pi_header_fixed_size - bytes of struct pi_file_header in a format
 * version, before its strings: the string lengths end it, padded to 8 */
static inline unsigned pi_header_fixed_size(unsigned version)
{
    unsigned end = (unsigned)offsetof(struct pi_file_header, string_len) +
                   2u * pi_header_string_count(version);
    return (end + 7u) & ~7u;
}

/* pi_string_slots - continuation slots that a string of @length bytes takes */
static inline uint32_t pi_string_slots(uint64_t length)
{
    return (uint32_t)((length + PI_RECORD_SIZE - 1) / PI_RECORD_SIZE);
}

/* pi_record_slots - slots the record at @r takes, its continuation included
 * (as its arg[1] says: check that length before trusting the count) */
static inline uint32_t pi_record_slots(const struct pi_record *r)
{
    return 1 + (pi_record_has_continuation(r->kind) ? pi_string_slots(r->arg[1]) : 0);
}

#endif
