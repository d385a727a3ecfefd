/*
 * trace_file.h - creating a process's trace file and its header.
 * Called by the writer thread only.
 */
#ifndef PI_TRACE_FILE_H
#define PI_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

struct pi_config;

/**
 * pi_trace_file_create - a new, private trace file in the configured output
 * directory (created 0700 with its parents when missing; the descriptor
 * handed over by attach when there is one)
 * @start_realtime_ns: part of the name, which is unique without coordination
 * @path: receives the file's path
 * @path_size: size of @path
 *
 * The file is created 0600 with O_EXCL|O_NOFOLLOW|O_CLOEXEC: a name that
 * exists, or a planted symlink, is never written through. A directory that
 * cannot be written (read-only file system, no permission) is replaced by
 * $TMPDIR (or /tmp)/profinject-traces-UID, with a message saying so, when
 * that is a private directory of this user (owner, mode 0700, as the control
 * directory): never one someone else made or opened to all.
 * Return: the file descriptor, or -1 with errno set and the reason said on
 * stderr (one profinject: line).
 */
int pi_trace_file_create(const struct pi_config *config, uint64_t start_realtime_ns, char *path,
                         size_t path_size);

/**
 * pi_trace_file_parent_name - in a fork child, the name (without its directory) of the
 * parent's trace file: that of @parent_path, or when the parent has not made its file yet,
 * the name it will give it
 */
void pi_trace_file_parent_name(char *name, size_t size, const char *parent_path, int parent_pid,
                               uint64_t parent_start_realtime_ns);

/* pi_trace_file_removed - whether the file behind @fd has no name left: writes to a removed
 * trace file (its directory with it) still succeed, into an inode that goes with the process */
int pi_trace_file_removed(int fd);

struct pi_header_clock {
    int clock_source;
    uint64_t start_realtime_ns;
    uint64_t start_monotonic_ns;
    uint64_t start_ticks;
    double ticks_per_second;
    uint64_t flush_interval_ns;
    uint64_t sample_interval_ns;
    int host_pid; /* our pid as the host sees it, when attach told it (0: read from /proc) */
    /* a fork child's: the ids below are its parent's, in the file named so (PI_HDR_INHERITED) */
    uint32_t inherited_below;
    const char *parent_file;
};

/**
 * pi_trace_header_build - the file header for this process, strings included
 * @out: receives the header
 * @capacity: size of @out; strings are truncated to fit
 * Return: the header's size in bytes.
 */
size_t pi_trace_header_build(uint8_t *out, size_t capacity, const struct pi_header_clock *clock);

#endif
