/*
 * verdict_thresholds.h - the shares at which a cause becomes a verdict:
 * the analyzer's rules over a whole trace (analyzer/verdicts/) and
 * `profinject top`'s over a running job's last interval read the same
 * numbers, so that the two name a job alike.
 */
#ifndef PROFINJECT_VERDICT_THRESHOLDS_H
#define PROFINJECT_VERDICT_THRESHOLDS_H

/* the loop waits for input (batches, their receipt) */
#define PI_INPUT_BOUND_SHARE 0.15
/* the GPU's busy share of the loop */
#define PI_GPU_BOUND_SHARE 0.80
/* the host blocked in synchronisation */
#define PI_SYNC_BOUND_SHARE 0.20
/* the GPU idle, not explained by data or sync waits */
#define PI_LAUNCH_BOUND_IDLE 0.20
/* the host hardly waits for the GPU at its per-step synchronisations */
#define PI_HOST_WAITS_LITTLE 0.05
/* the main thread blocked on a lock, a condition or the GIL */
#define PI_WAIT_BOUND_SHARE 0.20
/* the loop computes on the CPU */
#define PI_COMPUTE_BOUND_SHARE 0.50
/* a computing loop's intra-op threads spin for work: said, with what to change */
#define PI_POOL_SPINNING_SHARE 0.10

#endif
