/*
 * cupti_records.h - the activity records CUPTI hands back, turned into
 * GPU_TIME records of our launches and copies (cupti_records.c).
 *
 * CUPTI ties each kernel, memcpy and memset record to the API call that
 * queued it by its own correlation id; that call's API record (thread,
 * start, end) is matched to the timed call of ours that overlaps it on the
 * same thread (call_ring.h). Durations of calls we recorded that never
 * arrive (dropped by CUPTI, or unfinished when flushed) become LOST records.
 */
#ifndef PI_CUPTI_RECORDS_H
#define PI_CUPTI_RECORDS_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

/**
 * pi_cupti_records_clock - how CUPTI's timestamps map to our clock ticks
 * @own_clock: CUPTI reads our clock (pi_cupti_records_timestamp); else
 *             CUPTI's default (CLOCK_REALTIME), mapped by a pair of
 *             readings taken now and renewed at every flush
 */
void pi_cupti_records_clock(int own_clock);

/* pi_cupti_records_timestamp - our clock in nanoseconds, for cuptiActivityRegisterTimestampCallback */
uint64_t CUPTIAPI pi_cupti_records_timestamp(void);

/**
 * pi_cupti_records_clock_handed_back - CUPTI goes on without us: there is no
 * way to unregister a timestamp callback, so from now on ours gives CUPTI's
 * own default (CLOCK_REALTIME nanoseconds, cupti_activity.h), and another
 * client sees the timestamps it would have seen without us
 */
void pi_cupti_records_clock_handed_back(void);

/* pi_cupti_records_thread_ids - API records name threads by pthread_self() (1) or kernel id (0) */
void pi_cupti_records_thread_ids(int by_pthread);

/* pi_cupti_records_before_flush - renew the clock pair (CUPTI's default clock only) */
void pi_cupti_records_before_flush(void);

/**
 * pi_cupti_records_close - the CUPTI session ends (exit, exec, handover):
 * what still waits for its API record is given up; durations of ours
 * that will not come are counted as lost
 */
void pi_cupti_records_close(void);

/* pi_cupti_records_after_fork - the child has no CUPTI session */
void pi_cupti_records_after_fork(void);

/* CUPTI's buffer callbacks. */
void CUPTIAPI pi_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI pi_cupti_buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid);

#endif
