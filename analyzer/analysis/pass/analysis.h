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

/* The pass's first and last steps, for a pass over partial files (partial_merge.h):
 * pi_analysis_begin - @analysis empty with @options, room for @count processes (0, or -1);
 * pi_analysis_end - once every file is committed, what needs them all (the ranks'
 * straggler, the tree's memory peak); 0, or -1 when a file could not be read */
int pi_analysis_begin(struct pi_analysis *analysis, const struct pi_analysis_options *options,
                      size_t count);
int pi_analysis_end(struct pi_analysis *analysis);

#endif
