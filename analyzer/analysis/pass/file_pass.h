/*
 * file_pass.h - one trace file read whole into the record of its process,
 * then committed: put in its place after the files before it. Reading
 * touches only the process, the file's reader and the analysis it is
 * given (the whole one when files are read one by one, the file's own when
 * they are read in parallel: file_merge.h), so any thread may read a
 * file; the commit does what depends on the order of the files (the
 * ranks, the GPU timing choice, the export's rows, the process that keeps
 * its per-step figures) and is made in file order, one file at a time.
 */
#ifndef PI_FILE_PASS_H
#define PI_FILE_PASS_H

#include <stdio.h>

#include "analysis/model/model.h"

/* pi_file_pass_open_observer - the observer's context for one file: NULL when there is no
 * observer or it could not make one (the file is then read unobserved) */
void *pi_file_pass_open_observer(const struct pi_analysis_options *options);

/**
 * pi_file_pass_inherit - before pi_file_pass_read: a fork child's inherited ids looked up
 * in its parent's file (@analysis's lineage), or why they cannot be, kept in @process and
 * said on @messages
 */
void pi_file_pass_inherit(const struct pi_analysis *analysis, struct pi_process_info *process,
                          struct pi_reader *reader, FILE *messages);

/**
 * pi_file_pass_read - read every record of @reader into @process
 * @analysis: where the tables shared by the files go, and the options
 * @process: zeroed but for its path
 * @observer_file: from pi_file_pass_open_observer
 * @messages: where a read error and the warning for a file cut short go
 * Return: 0, or -1 when the file could not be read to its end (what was read is kept).
 */
int pi_file_pass_read(struct pi_analysis *analysis, struct pi_process_info *process,
                      struct pi_reader *reader, void *observer_file, FILE *messages);

/**
 * pi_file_pass_commit - @process, read, at its place in @analysis's processes, after every
 * file before it: its GPU timing choice, the observer's rows, its rank, the totals
 */
void pi_file_pass_commit(struct pi_analysis *analysis, struct pi_process_info *process,
                         void *observer_file);

/* pi_file_pass_progress - "N% of M MB" on stderr when asked for and the input is large */
void pi_file_pass_progress(const struct pi_analysis *analysis, uint64_t bytes_done);

#endif
