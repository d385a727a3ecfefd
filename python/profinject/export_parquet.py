"""Parquet beside the CSV tables of `profinject-analyze --export DIR`.

The analyzer writes each table as CSV (analyzer/reports/export_csv.c) and,
for --export-format parquet or both, runs this file with a Python that has
pyarrow: `python3 export_parquet.py DIR [--drop-csv]`. Each table becomes
DIR/NAME.parquet with the typed columns below (analyzer/REPORT.md#export),
read in batches and written as row groups, so memory does not grow with the
number of ranks.

Types are those every engine reads without options: signed 64-bit integers
(Spark has no unsigned types), UTF-8 strings, booleans and doubles. Times
stay integer nanoseconds, not Parquet timestamps: Spark reads no nanosecond
timestamps, and the CSV holds the same numbers. FLOPs are doubles: a long
job's product shape can pass 2^63.

Exit status: 0 done, 2 a table is not the one this file knows (an analyzer
and a package of different versions), 3 no pyarrow in this Python."""
import os
import sys

NO_PYARROW = 3
WRONG_TABLE = 2

WHOSE = [("job", "string"), ("rank", "int64"), ("host", "string"), ("pid", "int64")]

# Each table's columns, in the CSV's order, with their Parquet types.
TABLES = {
    "ranks": [("job", "string"), ("rank", "int64"), ("local_rank", "int64"),
              ("host", "string"), ("pid", "int64"), ("steps", "int64"),
              ("warmup_steps", "int64"), ("step_p50_ns", "int64"), ("step_p95_ns", "int64"),
              ("steady_ns", "int64"), ("collective_wait_ns", "int64"),
              ("data_wait_ns", "int64"), ("gpu_wait_ns", "int64"),
              ("slowest_steps", "int64"), ("straggler", "bool")],
    "steps": WHOSE + [("step", "int64"), ("warmup", "bool"), ("start_unix_ns", "int64"),
                      ("end_unix_ns", "int64"), ("duration_ns", "int64"),
                      ("collective_wait_ns", "int64"), ("data_wait_ns", "int64"),
                      ("gpu_wait_ns", "int64"), ("gpu_ns", "int64")],
    "kernels": WHOSE + [("kernel", "string"), ("launches", "int64"),
                        ("gpu_total_ns", "int64"), ("gpu_max_ns", "int64")],
    "kernels_by_module": [("module_path", "string"), ("depth", "int64"), ("kernel", "string"),
                          ("kernel_full", "string"), ("gpu_ns", "int64"),
                          ("launches", "double"), ("samples", "int64"), ("share", "double")],
    "collectives": WHOSE + [("function", "string"), ("datatype", "string"),
                            ("size_bucket", "int64"), ("calls", "int64"), ("failed", "int64"),
                            ("bytes", "int64"), ("host_ns", "int64"), ("gpu_ns", "int64"),
                            ("algbw_bytes_per_s", "double"), ("busbw_bytes_per_s", "double")],
    "gemm_shapes": WHOSE + [("m", "int64"), ("n", "int64"), ("k", "int64"), ("batch", "int64"),
                            ("dtype", "string"), ("calls", "int64"), ("kernels", "int64"),
                            ("flops", "double"), ("gpu_ns", "int64"),
                            ("tflops_per_s", "double")],
    "spans": WHOSE + [("name", "string"), ("kind", "string"), ("tid", "int64"),
                      ("depth", "int64"), ("start_ns", "int64"), ("duration_ns", "int64"),
                      ("cpu_ns", "int64"), ("device_bytes_change", "int64"),
                      ("host_bytes_change", "int64"), ("raised", "bool")],
}


def say(text):
    sys.stderr.write(f"profinject-analyze: {text}\n")


def header_of(path):
    with open(path, encoding="utf-8") as f:
        return f.readline().rstrip("\n").split(",")


def convert(csv_path, parquet_path, columns):
    """The CSV table at @csv_path as Parquet at @parquet_path, batch by batch."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    types = {"int64": pa.int64(), "double": pa.float64(), "bool": pa.bool_(),
             "string": pa.string()}
    schema = pa.schema([(name, types[kind]) for name, kind in columns])
    reader = pacsv.open_csv(
        csv_path,
        read_options=pacsv.ReadOptions(block_size=1 << 22),
        convert_options=pacsv.ConvertOptions(
            column_types=schema, true_values=["true"], false_values=["false"],
            strings_can_be_null=False, null_values=[""]))
    temporary = parquet_path + ".partial"
    with pq.ParquetWriter(temporary, schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
    os.replace(temporary, parquet_path)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if len(argv) >= 2 else WRONG_TABLE
    folder, drop_csv = argv[1], "--drop-csv" in argv[2:]
    try:
        import pyarrow  # noqa: F401 (only to say early that it is missing)
    except ImportError:
        return NO_PYARROW
    written = []
    for name, columns in TABLES.items():
        csv_path = os.path.join(folder, name + ".csv")
        if not os.path.exists(csv_path):
            continue
        header = header_of(csv_path)
        if header != [column for column, _ in columns]:
            say(f"{csv_path} has columns {header}, this Parquet writer knows "
                f"{[column for column, _ in columns]}: the analyzer and {__file__} are of "
                "different versions")
            return WRONG_TABLE
        try:
            convert(csv_path, os.path.join(folder, name + ".parquet"), columns)
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
            say(f"{csv_path}: {error}")
            return 1
        written.append(csv_path)
    if drop_csv:
        for csv_path in written:
            os.unlink(csv_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
