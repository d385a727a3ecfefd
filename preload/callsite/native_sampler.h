/*
 * native_sampler.h - where the application's threads spend their CPU in
 * native code (a PyTorch operator, its intra-op pool, a tokenizer), which no
 * Python sample can tell apart: each thread of the application gets a timer
 * on its own CPU clock that signals it every PROFINJECT_NATIVE_CPU_MS
 * (0, the default: never; 10 is a good choice) of CPU it uses; the handler walks the thread's
 * native stack into a ring, and a thread of ours writes each walk as a
 * PI_REC_NATIVE_SAMPLE. A thread that sleeps or waits gets no sample, so the
 * samples weigh CPU time only, thread by thread.
 *
 * Only with libunwind (its walk is safe in a signal handler; glibc's is not),
 * and only where the application left the signal (SIGRTMIN + 6) alone.
 *
 * Off unless asked for: a signal's handler changes what some system calls
 * return in the thread it reaches, even with SA_RESTART: poll, select,
 * nanosleep and timed semaphore waits fail with EINTR, and a pipe read or
 * write already under way returns short (prog_stress, which counts only
 * whole transfers, saw more records than calls). Python retries all of
 * them; C code that does not may misbehave.
 */
#ifndef PI_NATIVE_SAMPLER_H
#define PI_NATIVE_SAMPLER_H

/* pi_native_sampler_start - read PROFINJECT_NATIVE_CPU_MS and sample the calling (main)
 * thread and every application thread started from now on (library constructor) */
void pi_native_sampler_start(void);

/* pi_native_sampler_thread_start - a new application thread, at its start: sample it */
void pi_native_sampler_thread_start(void);

#endif
