/*
 * span_steps.h - training steps from the framework's own calls (PI_REC_SPAN,
 * format 15): where the recorder marked the optimizer's step, a training
 * step is one optimizer step; without one (a manual SGD update), one
 * backward call. Exact where every other source guesses, so it wins over
 * them all when present.
 *
 * On the thread with the most optimizer steps (the training loop's), step
 * k ends where optimizer step k returns and starts where step k - 1 ended;
 * the first starts at the entry of the earliest call that prepared it (a
 * module's forward, a backward, the DataLoader's next(), or a depth-0 call
 * of the user's own) and returned before it began, else at its own entry.
 * The backward calls inside a step are its micro-batches (gradient
 * accumulation): where a step has two or more, each took from the step's
 * start or the previous one's return to its own backward call's return,
 * and the rest of the step (the optimizer step, zero_grad) follows the
 * last one. Without optimizer steps, two backward calls or more on a
 * thread make one step each, in the same way. Without either (an
 * evaluation or inference loop), a batch taken by the DataLoader's next()
 * makes a step from that call's entry to the entry of the next batch's
 * call, or of the call that ended the epoch by StopIteration; batches taken
 * within 1 ms with none of the loop's work between them (a module's
 * forward, a backward, an optimizer step, a user's call) are one step's
 * (DataLoaders zipped); a step with none of that work is none (a batch
 * taken and left by a loop that broke); the last open step ends at the
 * return of the work done after its batch. On a thread where no span marks
 * the loop's work (it computes in plain functions), every batch begins a
 * step, and a last step no call ends is none.
 * A step's wait for data is
 * its thread's time in the DataLoader's next(); its synchronisations, lock
 * waits and GPU work are placed by time, as for the other sources.
 *
 * Calls of one kind nest (a wrapping optimizer's step calls the wrapped
 * one's; Tensor.backward calls torch.autograd.backward): only the
 * outermost counts. A thread's calls arrive in return order, inner before
 * outer, so each one is held until the next of its kind shows whether it
 * was inside.
 */
#ifndef PI_SPAN_STEPS_H
#define PI_SPAN_STEPS_H

#include <stdint.h>

#include "analysis/model/model.h"

/* steps_from of steps by batches (no optimizer, no backward): with a model's or the user's
 * marked calls between them, an evaluation or inference loop; with none, a loop whose work
 * no span marks (training or not, it cannot be told) */
#define PI_STEPS_FROM_BATCHES "DataLoader next()"
#define PI_STEPS_FROM_EVERY_BATCH "DataLoader next(), every batch"

/* pi_steps_by_batches - whether @process's steps are a loop of a model's calls over a
 * DataLoader's batches, with no backward or optimizer step: inference, not training */
int pi_steps_by_batches(const struct pi_process_info *process);

/* pi_span_steps_event - a PI_REC_SPAN record of @process; @exact: for the steps' histograms;
 * @warmup_steps: as pi_span_steps_finish will be given it */
void pi_span_steps_event(struct pi_process_info *process, const struct pi_event *ev, int exact,
                         unsigned warmup_steps);

/* pi_span_steps_gpu - GPU work of @dur ns launched at @ts (else started); @collective: an
 * NCCL kernel's */
void pi_span_steps_gpu(struct pi_process_info *process, uint64_t ts, uint64_t dur,
                       int collective);

/* pi_span_steps_wait - thread @tid of @process waited @dur ns from @ts, in @time_class
 * (synchronisations and lock waits are kept) */
void pi_span_steps_wait(struct pi_process_info *process, uint32_t tid, uint64_t ts,
                        uint64_t dur, unsigned time_class);

/**
 * pi_span_steps_finish - the file is read: where spans count the steps, make them
 * @process's steps (finished with @warmup_steps, steps_from and steps_tid set, the span's
 * name in its span table) and let the rest go
 * Return: 1 when spans gave the steps, else 0.
 */
int pi_span_steps_finish(struct pi_process_info *process, const struct pi_reader *reader,
                         unsigned warmup_steps);

/* pi_span_steps_free - release what step detection from spans holds while a file is read */
void pi_span_steps_free(struct pi_process_info *process);

#endif
