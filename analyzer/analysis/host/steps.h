/*
 * steps.h - training steps found without code changes: from the batches the
 * main thread receives (steps.c), the relay's (relay_steps.h), NVTX ranges,
 * the framework's optimizer steps and backward calls (span_steps.h).
 */
#ifndef PI_STEPS_H
#define PI_STEPS_H

#include "analysis/model/model.h"

/* pi_steps_event - feed one main-thread event into step detection (batch_receipts.c);
 * @received: bytes it read from a pipe (0: none) */
void pi_steps_event(struct pi_steps *steps, const struct pi_event *ev, unsigned time_class,
                    uint64_t received);

/* pi_steps_wake - the main thread posted a semaphore another thread waited on, at @ts
 * (a DataLoader waking the thread that feeds its next index to a worker) */
void pi_steps_wake(struct pi_steps *steps, uint64_t ts);

/* pi_steps_receipts_finish - the thread ended: the steps of its last receipt
 * (before pi_steps_finish) */
void pi_steps_receipts_finish(struct pi_steps *steps);

/* pi_steps_record - one finished step from @start to @end, @wait of it waiting for data, @sync for the GPU */
void pi_steps_record(struct pi_steps *steps, uint64_t start, uint64_t end, uint64_t wait,
                     uint64_t sync);

/* pi_steps_merge_light - fold each step whose @work (one count per step)
 * is under @fraction of a typical step's (the 90th percentile) into the
 * step before: extra marks of one step */
void pi_steps_merge_light(struct pi_steps *steps, const uint64_t *work, double fraction);

/* pi_steps_gpu - GPU work of @dur ns launched at @ts (else started), for the step it falls in */
void pi_steps_gpu(struct pi_steps *steps, uint64_t ts, uint64_t dur);

/* pi_steps_lock - the main thread waited @dur ns on a lock from @ts (in a
 * distributed job: mostly for the other ranks, in a collective) */
void pi_steps_lock(struct pi_steps *steps, uint64_t ts, uint64_t dur);

/* pi_steps_collective_gpu - an NCCL kernel launched at @ts ran @dur ns on the GPU: in a
 * distributed GPU job, mostly waiting for the other ranks (counted with the lock waits) */
void pi_steps_collective_gpu(struct pi_steps *steps, uint64_t ts, uint64_t dur);

/* pi_steps_sync, pi_steps_wait - the thread was blocked @dur ns from @ts, on the GPU or for
 * data, for the step it falls in, finished or not (a source whose steps end after their
 * waits arrive: span_steps.c) */
void pi_steps_sync(struct pi_steps *steps, uint64_t ts, uint64_t dur);
void pi_steps_wait(struct pi_steps *steps, uint64_t ts, uint64_t dur);

/* pi_steps_micro_batch - an outermost backward call from @start to @end: one more
 * micro-batch of the step it began in */
void pi_steps_micro_batch(struct pi_steps *steps, uint64_t start, uint64_t end);

/**
 * pi_steps_time_micro_batches - time each micro-batch of @steps' steps that have two or more
 * (pi_steps_micro_batch), in histograms exact where @exact
 * @warmup_steps: as pi_steps_finish will be given it (0: automatic)
 *
 * Which steps are warm-up is known only at pi_steps_finish: the micro-batches of the steps
 * that may be are kept until then (16 bytes each, of at most @warmup_steps steps or the
 * automatic warm-up's most), those of the later ones go to the histogram as they come.
 */
void pi_steps_time_micro_batches(struct pi_steps *steps, int exact, unsigned warmup_steps);

/* pi_steps_micro_batch_share - of the time of the steps timed by their micro-batches, the
 * share the micro-batches took (0..1; 0: no step had two) */
double pi_steps_micro_batch_share(const struct pi_steps *steps);

/* pi_steps_add_wait - @dur ns from @ts waited for data, for the finished step it falls in */
void pi_steps_add_wait(struct pi_steps *steps, uint64_t ts, uint64_t dur);

/* pi_steps_start_ns, pi_steps_end_ns - when step @i (from 0) started and ended */
uint64_t pi_steps_start_ns(const struct pi_steps *steps, uint64_t i);
uint64_t pi_steps_end_ns(const struct pi_steps *steps, uint64_t i);

/* pi_steps_release_figures - let go of the per-step figures, keeping the count and the
 * steady/warm-up summaries; pi_steps_figures and pi_steps_span then find none */
void pi_steps_release_figures(struct pi_steps *steps);

/* pi_steps_free - release what the steps hold */
void pi_steps_free(struct pi_steps *steps);

/* pi_steps_span - start and end of step @index (0 first, warm-up included); 0 when out of range */
int pi_steps_span(const struct pi_steps *steps, uint64_t index, uint64_t *start, uint64_t *end);

/* One step's times (ns): when it started and ended, and of its time how long the
 * thread waited for data and for the GPU; the GPU work it launched, alongside;
 * how long the main thread waited on locks and its NCCL kernels ran (the
 * step's collective wait), when its longest lock wait ended (0: none), and
 * of the collective wait the NCCL kernels' GPU time */
/* A step's CPU time where the main thread's clock did not span it. */
#define PI_STEP_CPU_UNKNOWN UINT64_MAX

/* The numbers of one step's record in pi_steps.steps (steps.c), all uint64_t: a partial
 * file (pass/partial.h) writes them one by one without knowing their names. */
#define PI_STEP_RECORD_WORDS 14

struct pi_step_figures {
    uint64_t start, end, wait, sync, gpu, lock, release, collective_gpu;
    uint64_t cpu; /* the main thread's CPU time by its clock, PI_STEP_CPU_UNKNOWN: not read */
    uint64_t receive; /* getting the next batch, not blocked: receiving and rebuilding it */
    uint64_t micro_batches; /* its backward calls (steps from spans), 0: not counted */
    uint64_t micro_batches_end; /* where the last of them returned, 0: none */
};

/* pi_steps_receive - @ns of the last finished step spent receiving its next batch: in the
 * loop's next(), neither blocked nor computing the model (unpickling, rebuilding tensors) */
void pi_steps_receive(struct pi_steps *steps, uint64_t ns);

/* pi_steps_figures - step @index's figures (0 first, warm-up included); 0 when out of range */
int pi_steps_figures(const struct pi_steps *steps, uint64_t index, struct pi_step_figures *out);

/* pi_steps_mark_evaluation - an evaluation loop ran from @start to @end (ns): the steps it
 * overlaps are not steady steps (their time is mostly the loop's), before pi_steps_finish */
void pi_steps_mark_evaluation(struct pi_steps *steps, uint64_t start, uint64_t end);

/* pi_steps_steady - whether step @index is one of the steady steps: past the warm-up, and
 * holding no evaluation loop */
int pi_steps_steady(const struct pi_steps *steps, uint64_t index);

/* pi_steps_steady_count - the steady steps: neither warm-up nor holding an evaluation loop */
uint64_t pi_steps_steady_count(const struct pi_steps *steps);

/* pi_steps_finish - settle warm-up against steady state once the thread ended */
void pi_steps_finish(struct pi_steps *steps, unsigned warmup_steps);

/* pi_steps_measure_cpu - the main thread's CPU time in the steady steps of finished @steps,
 * from its clock's @samples (interpolated at each step's edges), where they span them all */
void pi_steps_measure_cpu(struct pi_steps *steps, const struct pi_clock_samples *samples);

/* pi_steps_steady_cpu_ns - the steady steps' CPU time: the main thread's clock where it was
 * measured, else their time not spent waiting for data or the GPU */
uint64_t pi_steps_steady_cpu_ns(const struct pi_steps *steps);

/* pi_steps_steady_other_ns - the rest of the steady steps beside a measured CPU time: blocked
 * in calls no hook sees, or waiting for a CPU (0 where CPU was not measured) */
uint64_t pi_steps_steady_other_ns(const struct pi_steps *steps);

#endif
