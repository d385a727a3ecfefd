/*
 * process_sample.h - what a process sample holds: resident memory from
 * /proc/self/statm (opened once by the writer) and the process's CPU time.
 * Raw system calls only: the writer never calls a hooked function.
 */
#ifndef PI_PROCESS_SAMPLE_H
#define PI_PROCESS_SAMPLE_H

#include <stdint.h>

struct pi_process_sample {
    uint64_t rss_bytes; /* 0 when /proc/self/statm could not be read */
    uint64_t user_ns;
    uint64_t system_ns;
};

/* pi_process_sample_read - fill @sample, reading resident pages from @statm_fd */
void pi_process_sample_read(int statm_fd, struct pi_process_sample *sample);

#endif
