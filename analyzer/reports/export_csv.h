/*
 * export_csv.h - `--export DIR`: tables for engines that read CSV as it is
 * (DuckDB, Spark, pandas): one row per rank, per step, per kernel and per
 * NCCL collective (function, datatype, size), per cuBLAS product shape
 * (m, n, k, batch, type) and per call of a marked Python function (span)
 * of each process. Rows are
 * written as each file takes its place in the file order (an observer of
 * the pass: with parallel reading, a file's kernels are counted by the
 * thread that reads it and written, with its steps and collectives, in
 * file order; its span rows wait in an unnamed file beside the tables, not
 * in memory), so memory does not grow with the number of ranks and the
 * tables do not depend on the number of threads; ranks.csv is written once
 * the cross-rank analysis is done. Schema: analyzer/REPORT.md#export.
 */
#ifndef PI_EXPORT_CSV_H
#define PI_EXPORT_CSV_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

struct pi_export {
    char dir[4000];
    FILE *steps, *kernels, *collectives, *gemm, *spans;
    int failed;
};

/**
 * pi_export_observer - make @observer write the per-step and per-kernel
 * tables into the directory @dir (made if missing)
 * Return: 0, or -1 with errno when the directory or a file cannot be made.
 */
int pi_export_observer(struct pi_export *export, const char *dir,
                       struct pi_analysis_observer *observer);

/**
 * pi_export_finish - write ranks.csv from the finished analysis and close
 * the tables
 * Return: 0, or -1 with errno when anything could not be written.
 */
int pi_export_finish(struct pi_export *export, const struct pi_analysis *analysis);

#endif
