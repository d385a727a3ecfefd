/*
 * process_sample.h - what a process sample holds: resident memory from
 * /proc/self/statm, the process's CPU time, and now and then its
 * proportional set size (PSS) from /proc/self/smaps_rollup.
 *
 * RSS counts every page a process maps, so the pages a fork child shares
 * with its parent (a DataLoader worker's copy of the interpreter and the
 * model) count once per process: the example job's three processes held
 * 851 MiB of RSS at their peak where their PSS, each shared page divided
 * among its sharers, added up to 369 MiB (373 MiB read from outside, the
 * launcher included). PSS is the figure that adds up across processes. But statm is a counter the kernel keeps (1.5 us to read),
 * while smaps_rollup walks every page table of the process: 7-8 ms for the
 * example job's 316 MiB main process, 35-42 ms for a process with 2 GiB
 * resident in 4 KiB pages (CPU time of the read, on a 2-core virtual
 * machine). So PSS is read at most once a second (PI_PSS_INTERVAL_NS), and
 * less often where one read costs more than 1/PI_PSS_COST_SHARE of the gap
 * to the next: at most 0.2% of a CPU whatever the process's size (the
 * example job's main process every 3.8 s, its workers every 3 s). On a
 * loaded machine, the reads took 0.17 s of the example job's 14.6 s of CPU
 * time; with 0.5%, 0.46 s of 19 s.
 *
 * Raw system calls only: the writer never calls a hooked function.
 */
#ifndef PI_PROCESS_SAMPLE_H
#define PI_PROCESS_SAMPLE_H

#include <stdint.h>

/* the shortest gap between two PSS reads of a process */
#define PI_PSS_INTERVAL_NS 1000000000ull
/* the gap is at least this many times what the last read cost */
#define PI_PSS_COST_SHARE 500u
/* the first read, this long after the writer starts: a process that ends
 * or execs sooner (a shell, the fork child of a subprocess) never pays for
 * one, and the analysis leaves out the moments it lived */
#define PI_PSS_FIRST_NS 100000000ull

/* The /proc files a writer reads its samples from, opened once per process
 * image (a fork child opens its own: /proc/self was the parent's). */
struct pi_process_sampler {
    int statm_fd;        /* -1: closed; 0 before the first open (never closed then) */
    int smaps_rollup_fd; /* opened at the first PSS read: a process that ends first never does */
    int pss_unreadable;  /* no smaps_rollup (kernels before 4.14), or not as expected */
    uint64_t next_pss_ns; /* CLOCK_MONOTONIC: when the next PSS read is due */
};

struct pi_process_sample {
    uint64_t rss_bytes; /* 0 when /proc/self/statm could not be read */
    uint64_t user_ns;
    uint64_t system_ns;
};

/* PSS and what one walk of the page tables found beside it */
struct pi_pss_sample {
    uint64_t pss_bytes;
    uint64_t rss_bytes; /* Rss of the same walk */
    uint64_t read_ns;   /* the writer's CPU time for the read */
};

/* pi_process_sampler_open - open statm for this process image, the first
 * PSS read due PI_PSS_FIRST_NS after @now_ns */
void pi_process_sampler_open(struct pi_process_sampler *sampler, uint64_t now_ns);

/* pi_process_sampler_close - close what is open (an fd inherited through fork too) */
void pi_process_sampler_close(struct pi_process_sampler *sampler);

/* pi_process_sample_read - fill @sample, reading resident pages from statm */
void pi_process_sample_read(const struct pi_process_sampler *sampler,
                            struct pi_process_sample *sample);

/* pi_resident_bytes_now - the process's resident memory now, from any thread (the long calls
 * of a marked Python function read it at both ends: span_stack.c): statm through a descriptor
 * of its own, opened at the first read of each process image; 0 when unreadable */
uint64_t pi_resident_bytes_now(void);

/* pi_resident_after_fork - in a fork child, while it has one thread: the parent's descriptor
 * (its /proc/self) goes, the child's first read opens its own */
void pi_resident_after_fork(void);

/* pi_pss_sample_read - read PSS when it is due at @now_ns; 1 with @pss
 * filled, 0 when not due or unreadable */
int pi_pss_sample_read(struct pi_process_sampler *sampler, uint64_t now_ns,
                       struct pi_pss_sample *pss);

/* pi_run_delay_open - /proc/self/task/@tid/schedstat, read-only; -1 where /proc is not this
 * process's own (another PID namespace's numbers) or lacks the file */
int pi_run_delay_open(int tid);

/* pi_run_delay_read - the time the thread of @schedstat_fd spent ready to run and waiting for
 * a CPU so far (ns, the file's second number); -1 when unreadable */
int64_t pi_run_delay_read(int schedstat_fd);

#endif
