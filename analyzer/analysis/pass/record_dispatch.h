/*
 * record_dispatch.h - one record handed to every part of the analysis
 * that follows it (record_dispatch.c). Used by the reading of a file
 * (file_pass.c), whichever thread reads it.
 */
#ifndef PI_RECORD_DISPATCH_H
#define PI_RECORD_DISPATCH_H

#include "analysis/model/model.h"

/**
 * pi_record_dispatch - account @ev, a record of @process read by @reader
 * @analysis: where the tables shared by all files go (latency tables, Python
 *            sites and time, GPU totals): the whole analysis, or one file's own
 *            when files are read in parallel (file_merge.h)
 */
void pi_record_dispatch(struct pi_analysis *analysis, const struct pi_reader *reader,
                        struct pi_process_info *process, const struct pi_event *ev);

#endif
