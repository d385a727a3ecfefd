/*
 * evaluation_loops.h - evaluation inside training, from the framework's own
 * calls (format 16): in a process that trains (it called backward or
 * stepped an optimizer), a run of two or more outermost calls of one
 * module made with autograd off (PI_SPAN_NO_GRAD: torch.no_grad,
 * inference_mode) on one thread, with no module call under autograd,
 * backward or optimizer step between, is an evaluation loop: a pass over
 * validation data between training steps, before the first or after the
 * last. A teacher's no_grad forward inside each training step is a run of
 * one, no loop, and ends a loop of another model before it.
 *
 * Memory: a few words a thread while its file is read, and the first
 * PI_EVALUATION_LOOPS_MAX loops (the others counted).
 */
#ifndef PI_EVALUATION_LOOPS_H
#define PI_EVALUATION_LOOPS_H

#include <stdint.h>

#include "analysis/model/model.h"

#define PI_EVALUATION_LOOPS_MAX 256

struct pi_evaluation_loop {
    uint64_t start_ns, end_ns; /* its first call's entry, its last one's return */
    uint64_t forwards;         /* its module calls */
};

struct pi_evaluation_threads;

struct pi_evaluation_loops {
    struct pi_evaluation_loop *loops; /* in the order they ended */
    size_t count;
    uint64_t unkept; /* past PI_EVALUATION_LOOPS_MAX */
    uint64_t total_ns;
    int trained;     /* a backward call or an optimizer step came */
    struct pi_evaluation_threads *threads; /* while the file is read */
};

/* pi_evaluation_loops_span - a PI_REC_SPAN record of @process */
void pi_evaluation_loops_span(struct pi_process_info *process, const struct pi_event *ev);

/* pi_evaluation_loops_finish_file - the file is read: its open runs end; a process that never
 * trained has none (its module calls are inference, not evaluation) */
void pi_evaluation_loops_finish_file(struct pi_process_info *process);

void pi_evaluation_loops_free(struct pi_process_info *process);

#endif
