/*
 * process_ends.h - what the trace set says of how its processes ended,
 * for the first screen of every report: those without their end record
 * and the files cut in the middle of a frame, whose last moments are
 * missing from every figure.
 */
#ifndef PI_PROCESS_ENDS_H
#define PI_PROCESS_ENDS_H

#include <stddef.h>

#include "analysis/model/model.h"

/* pi_processes_unended - how many processes have no end record (pi_process_unended); their
 * pids, comma-separated, into @pids (of @size) when given */
size_t pi_processes_unended(const struct pi_analysis *analysis, char *pids, size_t size);

/* pi_files_cut_short - how many trace files end in the middle of a frame */
size_t pi_files_cut_short(const struct pi_analysis *analysis);

#endif
