/*
 * job_stop.h - a job stopped from outside is not a job that died. Most
 * profiling sessions end by hand: a terminal's Ctrl-C, `timeout`, `kill`,
 * a scheduler's time limit (SIGTERM before SIGKILL). Such a stop reaches
 * several processes at once (a process group's Ctrl-C) or in turn (a
 * launcher passing it on, torchrun stopping its ranks); they are one
 * event, said once, not one death each.
 *
 * The job was stopped when a process at the top of the traced tree (its
 * parent untraced) took a SIGINT, SIGTERM or SIGHUP from outside the job:
 * ended by it, or had its own handler take it (Python's KeyboardInterrupt,
 * torchrun's agent). With it stopped: the processes the same kind of
 * signal reached from outside within STOP_TOGETHER_NS of it, those a
 * stopped process signalled, and the children of stopped processes that
 * ended after the stop however they ended (a launcher's SIGKILL after its
 * grace period). A signal a process raised itself (abort, a fault) is no
 * stop, nor is one that reached a worker while the rest of the job went
 * on: those stay deaths.
 */
#ifndef PI_JOB_STOP_H
#define PI_JOB_STOP_H

#include "analysis/model/model.h"

/* How a process ended with the job's stop (pi_process_info.stopped). */
enum pi_stopped_how {
    PI_NOT_STOPPED = 0,
    PI_STOPPED_FROM_OUTSIDE, /* a stop signal from outside the job */
    PI_STOPPED_BY_THE_JOB,   /* a stop signal from a stopped process of the job */
    PI_STOPPED_AFTER,        /* its parent was stopped; it ended after the stop */
};

/* pi_job_stop_find - fill @analysis->stop and each process's stopped (after the pass) */
void pi_job_stop_find(struct pi_analysis *analysis);

/* pi_stop_signal_of - the stop signal @p took and did not raise itself, or NULL */
const struct pi_fatal_signal *pi_stop_signal_of(const struct pi_process_info *p);

#endif
