/*
 * partial_pass.h - the analysis as a map and a reduce (partial.h): each
 * trace file read into a partial by whatever runs the map, then the
 * partials committed in the files' order into one analysis, for the
 * reports.
 */
#ifndef PI_PARTIAL_PASS_H
#define PI_PARTIAL_PASS_H

#include <stddef.h>

#include "analysis/model/model.h"

/**
 * pi_partial_make - read @trace whole (its fork parent looked for beside it) with @options
 * (exact, warmup_steps) and write its partial to @out; the reading's warnings on stderr
 * Return: 0; 1 when the trace could not be read to its end (the partial holds what was
 * read, and says so); -1 when it could not be opened or the partial written (why in @why).
 */
int pi_partial_make(const char *trace, const char *out, const struct pi_analysis_options *options,
                    char *why, size_t why_size);

/**
 * pi_partial_merge - the analysis of the traces of the @count partials @paths, in that
 * order, as pi_analysis_run would make it of the traces in that order with @options
 * (those the partials were made with)
 * Return: 0; 1 when a trace could not be read to its end (reported all the same, as the
 * whole analysis does); -1 when a partial could not be read (a message on stderr; the
 * analysis is then incomplete and must not be reported, but must be freed).
 */
int pi_partial_merge(struct pi_analysis *analysis, const struct pi_analysis_options *options,
                     char **paths, size_t count);

#endif
