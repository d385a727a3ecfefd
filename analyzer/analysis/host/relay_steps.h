/*
 * relay_steps.h - steps of a main thread that reads no pipe: batches
 * handed over by a relay thread (the DataLoader's pin-memory thread), and
 * the main thread's scalar read-back once a step (loss.item()).
 */
#ifndef PI_RELAY_STEPS_H
#define PI_RELAY_STEPS_H

#include <stdint.h>

#include "analysis/model/model.h"

/* pi_relay_io - a pipe or socket call of a non-main thread of @process: a relay candidate */
void pi_relay_io(struct pi_process_info *process, const struct pi_event *ev, int exact);

/* pi_relay_wake - a non-main thread of @process woke a thread waiting on a semaphore */
void pi_relay_wake(struct pi_process_info *process, const struct pi_event *ev, int exact);

/* pi_relay_main_event - a main-thread event with its time class (waits, read-backs) */
void pi_relay_main_event(struct pi_process_info *process, const struct pi_event *ev,
                         unsigned time_class, int exact);

/* pi_relay_gpu - GPU work of @dur ns started at @ts, for the read-back steps; @collective:
 * an NCCL kernel's */
void pi_relay_gpu(struct pi_process_info *process, uint64_t ts, uint64_t dur, int collective);

/**
 * pi_relay_finish - once the file is read: pick the relay thread, find the
 * main thread's waits for its batches, and replace @process's steps by the
 * relay's or the read-back's where they count better (sets steps_from)
 * Return: the main thread's wait time that was waiting for the relay's batches.
 */
uint64_t pi_relay_finish(struct pi_process_info *process, unsigned warmup_steps);

/* pi_relay_thread - the relay thread's tid, 0 when none (after pi_relay_finish, before
 * pi_relay_free: the pass keeps it in relay_tid) */
uint32_t pi_relay_thread(const struct pi_process_info *process);

void pi_relay_free(struct pi_process_info *process);

#endif
