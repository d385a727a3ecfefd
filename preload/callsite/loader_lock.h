/*
 * loader_lock.h - whether the C library's list of loaded modules is locked
 * right now, read from a signal handler without taking the lock.
 *
 * libunwind finds a frame's unwind table through dl_iterate_phdr, which
 * takes that lock (a recursive mutex of the dynamic loader). A handler that
 * waits for it can wait for ever: the interrupted thread may hold it, or be
 * half-way through taking or releasing it, and a thread that holds it may
 * be interrupted and wait in its own handler for libunwind's cache, held by
 * the first (seen: a thread computing inside a dl_iterate_phdr callback and
 * a sampled main thread, both waiting within seconds). A handler walks only
 * when the lock is free.
 */
#ifndef PI_LOADER_LOCK_H
#define PI_LOADER_LOCK_H

/* pi_loader_lock_find - find the lock, once (outside any handler): it is the one mutex of the
 * loader's state that the calling thread holds twice inside a nested dl_iterate_phdr.
 * Return: 1 when found. */
int pi_loader_lock_find(void);

/* pi_loader_lock_taken - for a signal handler: 1 when any thread holds the lock (or is taking
 * or releasing it), or it was never found */
int pi_loader_lock_taken(void);

#endif
