/*
 * config.h - recorder settings, read from PROFINJECT_* environment variables.
 */
#ifndef PI_CONFIG_H
#define PI_CONFIG_H

#include <limits.h>
#include <stdint.h>

#include "clock.h"

/* Process samples (RSS, CPU time) every 50 ms while the process computes:
 * each writer wake costs tens of microseconds of CPU on a virtual machine,
 * so 10 ms cost a busy PyTorch process about 1% of its CPU; 50 ms still
 * gives a training step of a few tens of ms a sample every step or two. */
#define PI_DEFAULT_SAMPLE_MS 50

struct pi_config {
    char output_dir[PATH_MAX];
    /* a process in a container attached from the host: the host's output
     * directory as a descriptor (core/output_handoff.h), -1 otherwise, and
     * the pid the host sees for process host_pid_of (0: not known) */
    int output_dir_fd;
    int host_pid, host_pid_of;
    uint64_t flush_interval_ns;  /* PROFINJECT_FLUSH_MS, default 100 (summary: 1000) */
    uint64_t sample_interval_ns; /* PROFINJECT_SAMPLE_MS, default 50 (summary: 200), 0 = off */
    uint64_t wait_threshold_ns;  /* PROFINJECT_WAIT_US, default 20: shorter waits are not recorded */
    uint32_t buffer_records;     /* PROFINJECT_BUFFER_KB per thread buffer, default 64 */
    uint32_t buffer_count;       /* PROFINJECT_POOL_MB in all, default 16 */
    uint32_t buffer_max_count;   /* PROFINJECT_POOL_MAX_MB: grown with the threads up to 256 */
    int compression_level;       /* PROFINJECT_ZSTD_LEVEL, default 3 */
    enum pi_clock_request clock; /* PROFINJECT_CLOCK=auto|tsc|monotonic */
    int disabled;                /* PROFINJECT_DISABLE=1 */
    /* PROFINJECT_MODE=summary (core/summary_mode.h) and its intervals; some settings have
     * defaults of its own (settings.c) */
    int summary;
    uint64_t summary_interval_ns;    /* PROFINJECT_SUMMARY_INTERVAL_S, default 10 */
    uint64_t summary_detail_ns;      /* PROFINJECT_SUMMARY_DETAIL_MS after a slow step (2000) */
    uint64_t summary_trigger_gap_ns; /* PROFINJECT_SUMMARY_TRIGGER_GAP_S between two windows */
    /* fault injection, for the reliability tests */
    uint64_t test_writer_stall_ns;  /* PROFINJECT_TEST_WRITER_STALL_MS: a slow disk */
    uint64_t test_stop_stall_ns;    /* PROFINJECT_TEST_STOP_STALL_MS: threads that end late */
    uint64_t test_fail_write_after; /* PROFINJECT_TEST_FAIL_WRITE_AFTER bytes: a full disk */
};

/**
 * pi_config_from_env - fill @config from the environment, defaults otherwise
 *
 * Malformed values keep their default and print one profinject: line.
 * Uses getenv only: safe before the C library is fully set up.
 */
void pi_config_from_env(struct pi_config *config);

/* pi_record_until_ns - when recording ends (PI_RECORD_UNTIL_ENV, CLOCK_MONOTONIC ns), 0: never */
uint64_t pi_record_until_ns(void);

#endif
