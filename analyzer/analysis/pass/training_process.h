/*
 * training_process.h - which process runs the training loop: the one the
 * single-process sections and verdicts are about. Here, below the verdicts,
 * so that the pass can tell while it reads which process the reports will
 * need step by step (the others' per-step figures are let go: ranks.c).
 */
#ifndef PI_TRAINING_PROCESS_H
#define PI_TRAINING_PROCESS_H

#include "analysis/model/model.h"

/* pi_more_like_training - whether @p looks more like the training process than @best:
 * steps, then GPU work, then Python, then CPU time; a launcher never */
int pi_more_like_training(const struct pi_process_info *p, const struct pi_process_info *best);

/**
 * pi_training_keep_figures - @rank's summary was taken by the ranks' analysis:
 * of the ranks read so far, only the one most like training keeps its
 * per-step figures (the reports draw that process's steps one by one); the
 * others let theirs go, so that memory does not grow with ranks × steps
 */
void pi_training_keep_figures(struct pi_analysis *analysis, struct pi_process_info *rank);

/* pi_training_process - the process whose main thread runs the training loop, or NULL */
const struct pi_process_info *pi_training_process(const struct pi_analysis *analysis);

#endif
