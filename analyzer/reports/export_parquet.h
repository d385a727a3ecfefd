/*
 * export_parquet.h - the tables of `--export DIR` as Parquet as well, for
 * engines that query a fleet's data (Spark, Trino, DuckDB).
 *
 * The analyzer writes CSV itself and hands the folder to export_parquet.py,
 * which writes each table as Parquet with pyarrow (typed columns, one row
 * group per batch read). Parquet is a format with nested encodings,
 * statistics and compression: a hand-made writer would be a second
 * implementation to keep right, and the C libraries that write it (Arrow's
 * GLib binding, DuckDB) would be tens of megabytes in every install for one
 * option, where pyarrow is already in the Python of anyone who queries
 * Parquet from Python. The script is installed in share/profinject/ beside
 * bin/ (the build tree and the wheel have the same layout); the Python is
 * PROFINJECT_PYTHON, else python3 on PATH (the wheel's `profinject` names
 * its own). Schema: analyzer/REPORT.md#export.
 */
#ifndef PI_EXPORT_PARQUET_H
#define PI_EXPORT_PARQUET_H

enum pi_export_format {
    PI_EXPORT_AS_AVAILABLE, /* CSV, and Parquet too where pyarrow is found (the default) */
    PI_EXPORT_CSV,
    PI_EXPORT_PARQUET, /* Parquet only: the CSV files are removed once converted */
    PI_EXPORT_BOTH,
};

/**
 * pi_export_format_parse - @text (csv, parquet or both) as a format
 * Return: 0, or -1 for another word.
 */
int pi_export_format_parse(const char *text, enum pi_export_format *format);

/**
 * pi_export_parquet - the CSV tables in @dir as Parquet, as @format asks;
 * says on stderr what it wrote, or why it wrote nothing
 * Return: 0, or -1 when Parquet was asked for and could not be written.
 */
int pi_export_parquet(const char *dir, enum pi_export_format format);

#endif
