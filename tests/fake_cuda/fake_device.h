/*
 * fake_device.h - the simulated GPU behind the fake libcuda.so.1: memory,
 * streams with a timeline each, events, kernels with test-chosen durations.
 *
 * Time is CLOCK_MONOTONIC. A stream's timeline is the time its last queued
 * work finishes; work queued on it starts when both the host queues it and
 * the stream is free. Synchronising waits (really sleeps) until then.
 * A gated kernel (fake_gate_next_kernel) starts once its gate opens, and
 * holds what is queued after it: until then their end is not known, and
 * synchronising polls the gate.
 */
#ifndef FAKE_DEVICE_H
#define FAKE_DEVICE_H

#include <stdint.h>

struct fake_stream;

/* fake_now_ns - CLOCK_MONOTONIC in ns */
uint64_t fake_now_ns(void);

/* fake_stream_of - the timeline of a CUstream (NULL and the per-thread
 * default stream map to the default timeline) */
struct fake_stream *fake_stream_of(void *cu_stream);

/* fake_enqueue - queue @duration_ns of work on @stream; returns its end time */
uint64_t fake_enqueue(struct fake_stream *stream, uint64_t duration_ns);

/* fake_stream_end - when everything queued on @stream is done */
uint64_t fake_stream_end(struct fake_stream *stream);

/* fake_device_end - when everything queued on any stream is done */
uint64_t fake_device_end(void);

/* fake_sleep_until - block the calling thread until @when_ns */
void fake_sleep_until(uint64_t when_ns);

/* The end of work that waits behind a gate not open yet: not known. */
#define FAKE_NEVER UINT64_MAX

/* fake_stream_wait - block until everything queued on @stream (NULL: on any stream) is done,
 * gates included */
void fake_stream_wait(struct fake_stream *stream);

/* fake_gate_next_kernel - the calling thread's next kernel waits on its stream until
 * @ready(@arg) returns nonzero (a collective waiting for its peers, fake_nccl.c); the work
 * queued behind it on that stream waits too. Exported for the fake libnccl. */
void fake_gate_next_kernel(int (*ready)(void *), void *arg);

/* fake_enqueue_kernel - fake_enqueue for a kernel: behind the gate fake_gate_next_kernel set,
 * if any (its end is then FAKE_NEVER) */
uint64_t fake_enqueue_kernel(struct fake_stream *stream, uint64_t duration_ns);

struct fake_stream *fake_stream_create(void);
void fake_stream_destroy(struct fake_stream *stream);

/* Copies run at this speed on the fake device. */
#define FAKE_COPY_BYTES_PER_NS 10.0

#endif
