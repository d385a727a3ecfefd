/*
 * partial.h - one trace file's pass, kept in a file: a partial. The map
 * step of an analysis that any engine runs (a Slurm array, Dask, Spark):
 * `profinject-analyze partial` reads one file whole into an analysis of
 * its own, exactly as a thread of the parallel pass does (parallel_pass.h),
 * and writes that analysis's tables and the file's process record here;
 * `profinject-analyze merge` reads the partials back in the order the
 * whole analysis takes the files and commits each as the parallel pass
 * does, so the reports are byte for byte those of one analysis of all
 * the files.
 *
 * The file (analyzer/REPORT.md, "Partial files"): the 8 bytes "PIPARTL\n",
 * the partial format's version as a varint, the version of the analyzer
 * that wrote it and of the trace format it reads, a fingerprint of its
 * model (the sizes of the structures written), the analysis options
 * that change figures (exact percentiles, warm-up steps), the trace's path,
 * whether the trace could be read to its end, then the process record
 * (partial_process.h), the file's tables (partial_tables.h) and the 4 bytes
 * "END\n". Another format or analyzer version is refused: the record
 * follows the analyzer's model, which changes between versions.
 */
#ifndef PI_PARTIAL_H
#define PI_PARTIAL_H

#include <stddef.h>

#include "analysis/model/model.h"

/* The partial file layout's version: bump with any change to what is written. */
#define PI_PARTIAL_FORMAT_VERSION 1

/* What a partial says of itself before its figures. */
struct pi_partial_head {
    struct pi_analysis_options options; /* exact and warmup_steps; the rest zero */
    char *trace_path;                   /* the trace it was made from, as given */
    int read_failed;                    /* the trace could not be read to its end */
};

/**
 * pi_partial_write - @own's tables and @process, read from @head's trace, into @path
 * (written beside it, then renamed over it: a reader never sees half a partial)
 * Return: 0, or -1 with why in @why.
 */
int pi_partial_write(const char *path, const struct pi_partial_head *head,
                     struct pi_analysis *own, struct pi_process_info *process, char *why,
                     size_t why_size);

/**
 * pi_partial_peek - @path's head only (the merge orders partials by their traces' paths)
 * Return: 0, or -1 with why in @why. The caller frees head->trace_path.
 */
int pi_partial_peek(const char *path, struct pi_partial_head *head, char *why, size_t why_size);

/**
 * pi_partial_read - @path whole: its head, and its figures into @own (made here by
 * pi_file_analysis_init, for the process @process) and @process (zeroed)
 * Return: 0, or -1 with why in @why; @own and @process hold what was read either way,
 * for pi_file_analysis_free and, once the record is among an analysis's processes, pi_analysis_free.
 */
int pi_partial_read(const char *path, struct pi_partial_head *head, struct pi_analysis *own,
                    struct pi_process_info *process, char *why, size_t why_size);

#endif
