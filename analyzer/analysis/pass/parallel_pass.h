/*
 * parallel_pass.h - the files read by several threads at once: each file
 * whole by one thread, into its own tables (file_merge.h), then committed
 * by the calling thread in file order (file_pass.h), so that every output
 * is the same as reading them one after the other. A thread takes the next
 * file only while it is fewer than a window of files ahead of the last one
 * committed: memory holds that many files in flight, whatever their
 * number.
 */
#ifndef PI_PARALLEL_PASS_H
#define PI_PARALLEL_PASS_H

#include <stddef.h>

#include "analysis/model/model.h"

/**
 * pi_parallel_pass - read @count files of @paths with @jobs threads (2 or more) into
 * @analysis, prepared by pi_analysis_run (options, processes, base time)
 * Return: 0, or -1 when the threads could not be started (nothing was read: the caller
 * reads the files itself).
 */
int pi_parallel_pass(struct pi_analysis *analysis, char **paths, size_t count, unsigned jobs);

#endif
