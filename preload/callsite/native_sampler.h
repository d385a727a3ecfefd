/*
 * native_sampler.h - where the application's threads spend their CPU in
 * native code (a PyTorch operator, its intra-op pool, a tokenizer), which no
 * Python sample can tell apart: each thread of the application gets a timer
 * on its own CPU clock that signals it every PROFINJECT_NATIVE_CPU_MS
 * (default 10, 0: never) of CPU it uses; the handler walks the thread's
 * native stack into a ring, and a thread of ours writes each walk as a
 * PI_REC_NATIVE_SAMPLE. A thread that sleeps or waits gets no sample, so the
 * samples weigh CPU time only, thread by thread.
 *
 * By default only in a process that runs Python: a signal's handler changes
 * what some system calls return in the thread it reaches, even with
 * SA_RESTART (poll, select, nanosleep and timed semaphore waits fail with
 * EINTR, a pipe read or write under way may return short), and Python
 * retries every one of them, where C code may not. PROFINJECT_NATIVE_CPU_MS
 * set in the environment samples any process.
 *
 * Only with libunwind (its walk is safe in a signal handler; glibc's is not),
 * and only where the application left the signal (SIGRTMIN + 6) alone.
 */
#ifndef PI_NATIVE_SAMPLER_H
#define PI_NATIVE_SAMPLER_H

/* pi_native_sampler_start - read PROFINJECT_NATIVE_CPU_MS (library constructor): set, sample
 * from now on; by default, from the writer's first flush where Python runs */
void pi_native_sampler_start(void);

/* pi_native_sampler_thread_start - a new application thread, at its start: sample it */
void pi_native_sampler_thread_start(void);

/* pi_native_sampler_here - sample the calling thread if sampling runs and it is not sampled
 * yet: the main thread, from a Python time sample (a safe place: no signal handler, no lock
 * of the C library held) */
void pi_native_sampler_here(void);

#endif
