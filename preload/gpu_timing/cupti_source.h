/*
 * cupti_source.h - the CUPTI session: GPU time from CUPTI's activity API
 * (cupti_source.c), with libcupti found at run time (cupti_api.h) and its
 * records turned into ours by cupti_records.c.
 *
 * On the application's path nothing is asked of CUPTI: the session enables
 * the kernel, memcpy and memset records and the API records of exactly the
 * entry points profinject times; hooks note their calls in a per-thread
 * ring (call_ring.h).
 */
#ifndef PI_CUPTI_SOURCE_H
#define PI_CUPTI_SOURCE_H

#include <stddef.h>

/**
 * pi_cupti_start - load libcupti, subscribe and start activity recording
 * @reason: receives what happened, for the GPU_TIMING record
 * Return: 0 when recording, else CUPTI's error code (-1 when not loadable
 * or another client holds CUPTI).
 */
int pi_cupti_start(char *reason, size_t size);

/* pi_cupti_flush - have CUPTI hand over its records: the finished ones, or all with @forced */
void pi_cupti_flush(int forced);

/* pi_cupti_pause, pi_cupti_resume - no activity recorded while no window is open */
void pi_cupti_pause(void);
void pi_cupti_resume(void);

/* pi_cupti_stop - end the session: everything handed over, recording off, subscription released */
void pi_cupti_stop(void);

/* pi_cupti_after_fork - a fork child has no CUPTI session */
void pi_cupti_after_fork(void);

#endif
