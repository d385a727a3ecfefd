/*
 * event_pairs.h - GPU time from a pair of events recorded on the launch's
 * own stream around it (event_pairs.c): works wherever the driver does,
 * CUPTI or not. A thread of ours later asks the driver how far apart the
 * two completed, off the application's path.
 */
#ifndef PI_EVENT_PAIRS_H
#define PI_EVENT_PAIRS_H

#include <stdint.h>

#include "gpu_timing.h"

/* pi_event_pairs_load - find the driver's event calls; 0, or -1 when there is no usable driver */
int pi_event_pairs_load(void);

/* pi_event_pairs_sample - time every @every-th launch only (PROFINJECT_GPU_SAMPLE) */
void pi_event_pairs_sample(unsigned every);

/* pi_event_pairs_start - record the start event of @pair's launch, when it is one to time */
void pi_event_pairs_start(struct pi_gpu_pair *pair);

/* pi_event_pairs_finish - record the end event and queue the pair for @correlation */
void pi_event_pairs_finish(struct pi_gpu_pair *pair, uint64_t correlation, int failed);

/* pi_event_pairs_resolve - write the GPU times whose end has been reached */
void pi_event_pairs_resolve(void);

/* pi_event_pairs_close - resolve what is ready; the rest will not be written: counted as lost */
void pi_event_pairs_close(void);

/* pi_event_pairs_after_fork - a fork child cannot use the parent's events */
void pi_event_pairs_after_fork(void);

#endif
