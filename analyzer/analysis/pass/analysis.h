/*
 * analysis.h - the one pass over the trace files that builds the model
 * (analysis/model/model.h): every record is handed to the parts that
 * follow it (host/, gpu/, memory/, sites/). Includes what the verdicts and
 * reports read besides the model: steps and threads.
 */
#ifndef PI_ANALYSIS_H
#define PI_ANALYSIS_H

#include "analysis/host/host_memory.h"
#include "analysis/host/steps.h"
#include "analysis/host/threads.h"
#include "analysis/model/model.h"

/**
 * pi_analysis_run - read every trace file in @paths and build the analysis
 * Return: 0, or -1 when a file could not be read (message on stderr; the
 * others are still analysed and bad_input is set).
 */
int pi_analysis_run(struct pi_analysis *analysis, const struct pi_analysis_options *options,
                    char **paths, size_t count);

void pi_analysis_free(struct pi_analysis *analysis);

#endif
