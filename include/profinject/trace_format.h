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

#include <stdint.h>

#define PI_FILE_MAGIC "PROFINJ\x1a"
#define PI_FILE_MAGIC_LEN 8
#define PI_FORMAT_VERSION 1
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
};

/* Which string follows the fixed header, in this order. */
enum pi_header_string {
    PI_HDR_HOSTNAME,
    PI_HDR_CMDLINE, /* arguments separated by spaces */
    PI_HDR_EXE,
    PI_HDR_CGROUP,
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
    /* followed by the strings, not NUL-terminated, in enum order */
};

struct pi_frame_header {
    uint32_t magic;        /* PI_FRAME_MAGIC */
    uint32_t record_count;
    uint32_t sequence;     /* 1 for the first record frame, then +1 */
    uint32_t reserved;
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
    /* ts = ticks, arg0 = CLOCK_MONOTONIC ns, arg1 = CLOCK_REALTIME ns */
    PI_REC_CLOCK_SYNC = 3,
    /* arg0 = RSS bytes, arg1 = user CPU ns, arg2 = system CPU ns */
    PI_REC_PROC_SAMPLE = 4,
    /* arg0 = child pid (recorded in the parent) */
    PI_REC_FORK = 5,
    /* arg0 = string id of the program path */
    PI_REC_EXEC = 6,
    /* arg0 = exit status, arg1 = enum pi_end_reason */
    PI_REC_PROCESS_END = 7,
    /* instant mark from the control API: arg0 = value, arg1 = name string id */
    PI_REC_MARK = 8,
    /* range from the control API: dur set, arg0 = value, arg1 = name id */
    PI_REC_RANGE = 9,
    PI_REC_THREAD_START = 10, /* arg0 = creating thread's tid */
    PI_REC_THREAD_EXIT = 11,
    PI_REC_THREAD_NAME = 12,  /* arg0 = name string id */
    PI_REC_KIND_COUNT
};

enum pi_lost_reason {
    PI_LOST_NO_BUFFER = 1,  /* the writer fell behind; the application ran on */
    PI_LOST_BEFORE_INIT = 2,
    PI_LOST_WRITE_FAILED = 3,
};

enum pi_end_reason {
    PI_END_EXIT = 1,   /* exit() or return from main */
    PI_END__EXIT = 2,  /* _exit() */
    PI_END_SIGNAL = 3, /* arg0 holds the signal number */
};

/* Record flag bits. */
enum pi_record_flag {
    PI_FLAG_FAILED = 1u << 0, /* the intercepted call returned an error */
};

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

/* pi_record_has_time - whether a record's ts field is a time (strings' is not) */
static inline int pi_record_has_time(uint16_t kind)
{
    return kind != PI_REC_STRING;
}

/* pi_string_slots - continuation slots that a string of @length bytes takes */
static inline uint32_t pi_string_slots(uint64_t length)
{
    return (uint32_t)((length + PI_RECORD_SIZE - 1) / PI_RECORD_SIZE);
}

#endif
