/*
 * call_sites.h - where a call came from, for the hooks: the native frames
 * and, in a process with Python, the Python frames of the calling thread.
 *
 *   allocations   every one: native frames, and Python frames read in the
 *                 call when the thread holds the GIL, else (main thread) at
 *                 its next safe point (python_deferred.h)
 *   launches      one in PROFINJECT_PY_SAMPLE (default 100, randomised so a
 *                 loop's period cannot hide a kernel): Python frames; a
 *                 thread with none (autograd's), its native frames
 *   waits         the main thread's blocking receives on pipes and sockets
 *                 and its semaphore waits (Python's locks and queues): the
 *                 data waits of a training loop; Python frames only
 *
 * Python frames go into a PI_REC_CALL_SITE after the record they belong
 * to, except for an allocation whose frames are read in the call: its
 * record names the whole stack itself.
 */
#ifndef PI_CALL_SITES_H
#define PI_CALL_SITES_H

#include <stdint.h>

#include "profinject/trace_format.h"

/* pi_call_sites_start - read PROFINJECT_PY_SAMPLE, follow forks (library constructor) */
void pi_call_sites_start(void);

/**
 * pi_call_site_alloc - the stack id for the allocation record about to be
 * written; queues it for Python frames at the next safe point when they
 * cannot be read now
 * @flags: the record's flags
 * @ts: the record's start
 * @pointer: the allocation, which identifies the record later
 */
uint32_t pi_call_site_alloc(uint16_t flags, uint64_t ts, uint64_t pointer);

/* Launches until the next sample, per thread; see pi_call_site_launch_due. */
extern __thread int32_t pi_launch_countdown __attribute__((tls_model("initial-exec")));

/* pi_call_site_launch_due - nonzero when this launch is one of the sample (one test and decrement)
 */
static inline int pi_call_site_launch_due(void)
{
    return __builtin_expect(--pi_launch_countdown <= 0, 0);
}

/**
 * pi_call_site_launch - the Python frames of a sampled launch (after its record)
 * @flags: the launch record's flags
 * @ts: its start
 * @kernel: its kernel name id
 */
void pi_call_site_launch(uint16_t flags, uint64_t ts, uint32_t kernel);

/* pi_call_site_io_wait - whether an I/O call of @op on a @fd_class descriptor may be a data wait */
static inline int pi_call_site_io_wait(unsigned op, unsigned fd_class)
{
    return pi_io_is_data_wait(op, fd_class);
}

/**
 * pi_call_site_wait - the Python frames of a wait of the main thread (after its record)
 * @kind: PI_REC_IO or PI_REC_WAIT
 * @flags: the record's flags
 * @detail: the wait kind of a PI_REC_WAIT, else 0
 * @ts: its start
 * @duration: its duration in ticks
 */
void pi_call_site_wait(uint16_t kind, uint16_t flags, unsigned detail, uint64_t ts,
                       uint64_t duration);

#endif
