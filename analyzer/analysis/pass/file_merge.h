/*
 * file_merge.h - a file read in parallel with others keeps its shares of
 * the tables every file adds to (latency and file tables, Python lines and
 * time, GPU busy time) in an analysis of its own; merged into the whole
 * analysis in file order, they give what reading the files one after the
 * other gives: counts and sums add up, histograms merge by their buckets
 * (and, exact, their values in order), lists keep the order in which
 * their entries first appeared.
 */
#ifndef PI_FILE_MERGE_H
#define PI_FILE_MERGE_H

#include "analysis/model/model.h"

/* pi_file_analysis_init - @own, empty, for the file of @process, with @options */
void pi_file_analysis_init(struct pi_analysis *own, const struct pi_analysis_options *options,
                           struct pi_process_info *process);

/**
 * pi_file_analysis_merge - add @own's tables into @into, whose process @process (a copy of
 * @own's, at its place in @into's processes) is the file's; @own is left to free
 * Return: 0, or -1 when out of memory (part of the file's figures are then missing).
 */
int pi_file_analysis_merge(struct pi_analysis *into, struct pi_analysis *own,
                           const struct pi_process_info *process);

/* pi_file_analysis_free - @own's tables (not its process) */
void pi_file_analysis_free(struct pi_analysis *own);

#endif
