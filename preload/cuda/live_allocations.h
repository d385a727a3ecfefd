/*
 * live_allocations.h - the CUDA allocations live right now, kept while
 * recording and while paused, so a capture window that opens later starts
 * with the memory already held (records PI_CUDA_API_live_at_window_start)
 * and memory growth inside the window is right.
 *
 * One lock orders allocations against the opening of a window: an
 * allocation is either in the opening snapshot or recorded after it,
 * never both and never neither.
 */
#ifndef PI_LIVE_ALLOCATIONS_H
#define PI_LIVE_ALLOCATIONS_H

#include <stdint.h>

/* pi_live_alloc - emit @record_flags/@where alloc record (if recording) and remember it */
void pi_live_alloc(uint16_t record_flags, uint64_t ts, uint64_t dur, uint64_t pointer,
                   uint64_t bytes, uint64_t where);

/**
 * pi_live_forget - @pointer is about to be freed: forget it now, before the
 * real call. Once that returns, another thread may get the same address
 * from the allocator and record it before this thread records the free;
 * forgetting first keeps the newer allocation.
 * Return: whether it was live; @saved receives it, for pi_live_restore.
 */
struct pi_live_saved {
    uint64_t pointer, bytes, where;
    uint16_t flags;
};
int pi_live_forget(uint64_t pointer, struct pi_live_saved *saved);

/* pi_live_restore - the free failed: @saved is live again */
void pi_live_restore(const struct pi_live_saved *saved);

/* pi_live_free - emit the free record (if recording); pi_live_forget came first */
void pi_live_free(uint16_t record_flags, uint64_t ts, uint64_t dur, uint64_t pointer,
                  uint64_t bytes, uint64_t where);

/**
 * pi_live_open_window - turn recording on and record every live allocation
 * at that instant (never from a signal handler: it waits for the table's lock)
 * Return: 0, or -1 when the snapshot is incomplete.
 */
int pi_live_open_window(void);

/* pi_live_forget_all - frees are no longer followed (detach): what the table holds would go stale */
void pi_live_forget_all(void);

/* pi_live_device_bytes - the device memory the live allocations hold now (host memory apart) */
uint64_t pi_live_device_bytes(void);

/* pi_live_after_fork - in a fork child: no CUDA memory, lock free */
void pi_live_after_fork(void);

#endif
