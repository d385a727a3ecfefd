/*
 * thread_cpu_edges.h - every thread's CPU time where the recording starts
 * or stops while threads run: the edges of a capture window, an attach.
 * A thread's exit record says its CPU time since it began; with these the
 * analyzer takes from it only what the thread used while recording was on.
 */
#ifndef PI_THREAD_CPU_EDGES_H
#define PI_THREAD_CPU_EDGES_H

#include <stdint.h>

/* pi_thread_cpu_edges - one PI_REC_THREAD_CPU record at @ts for each thread of
 * the process (/proc/self/task), @opening PI_THREAD_CPU_OPENING or _CLOSING;
 * written whether recording is on or not. Raw system calls only. */
void pi_thread_cpu_edges(uint64_t ts, unsigned opening);

#endif
