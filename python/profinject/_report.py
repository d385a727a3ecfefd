"""The JSON report (profinject-analyze --json) as data: a dict, checked to be
a report of the schema version this package reads, and its tables as pandas
DataFrames."""
import json
import os
import subprocess
import tempfile

from ._native import analyzer_path

SCHEMA = "profinject-report"
SCHEMA_VERSION = 2

# the latency fields of every latency[], files[] and steps entry (REPORT.md)
LATENCY_FIELDS = ("count", "total_ns", "mean_ns", "p50_ns", "p90_ns", "p95_ns", "p99_ns",
                  "p99_9_ns", "max_ns", "bytes")


class ReportError(ValueError):
    """The file is not a report this package can read."""


def load_report(path):
    """The report at @path as a dict. Raises ReportError when the file is not
    a profinject report or is of another schema version: fields keep their
    meaning only within one version."""
    with open(path, encoding="utf-8") as f:
        try:
            report = json.load(f)
        except json.JSONDecodeError as error:
            raise ReportError(f"profinject: {path} is not JSON ({error}): write a report "
                              "with profinject analyze TRACES --json FILE") from None
    schema = report.get("schema") if isinstance(report, dict) else None
    if schema != SCHEMA:
        raise ReportError(f"profinject: {path} is not a profinject report (schema {schema!r}, "
                          f"expected {SCHEMA!r}): write one with profinject analyze TRACES "
                          "--json FILE")
    version = report.get("version")
    if version != SCHEMA_VERSION:
        raise ReportError(f"profinject: {path} is report version {version!r}, this package "
                          f"reads version {SCHEMA_VERSION}: analyse the traces again with "
                          "this package's profinject, or install the version that wrote it")
    return report


def analyze(traces, *options):
    """Analyse the trace folder (or files) @traces with this package's
    analyzer and return the report, as load_report() does. @options are
    more of profinject-analyze's options (such as "--warmup", "5")."""
    with tempfile.TemporaryDirectory(prefix="profinject-") as folder:
        out = os.path.join(folder, "report.json")
        paths = [traces] if isinstance(traces, (str, os.PathLike)) else list(traces)
        done = subprocess.run([analyzer_path(), *map(os.fspath, paths), "--quiet", "--json", out,
                               *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:
            raise ReportError(done.stderr.strip() or
                              f"profinject: the analyzer exited with status {done.returncode}")
        return load_report(out)


def _report(report):
    return load_report(report) if isinstance(report, (str, os.PathLike)) else report


def _frame(rows, columns):
    try:
        import pandas
    except ImportError:
        raise ImportError("profinject: the tables are pandas DataFrames: pip install pandas "
                          "(the report itself is load_report()'s dict)") from None
    return pandas.DataFrame(rows, columns=columns)


def steps(report):
    """One row per process with training steps: pid, command, how the steps
    were found, their count and warm-up, and the steady steps' latency
    fields with their data, sync, CPU and GPU times (REPORT.md,
    processes[].steps). @report: a report dict or a path to one."""
    extra = ("data_wait_ns", "data_receive_ns", "sync_ns", "cpu_ns", "gpu_ns", "other_ns")
    columns = ["pid", "command", "found_from", "steps", "warmup"] + \
        [f"steady_{name}" for name in LATENCY_FIELDS + extra]
    rows = []
    for process in _report(report).get("processes", []):
        found = process.get("steps") or {}
        if not found.get("count"):
            continue
        steady = found.get("steady") or {}
        rows.append([process.get("pid"), process.get("command"), found.get("found_from"),
                     found.get("count"), found.get("warmup")] +
                    [steady.get(name) for name in LATENCY_FIELDS + extra])
    return _frame(rows, columns)


def latency(report):
    """The latency table: one row per call kind (group, name, class) with its
    count, total, mean, percentiles, maximum (nanoseconds) and bytes,
    largest total first (REPORT.md, latency[])."""
    columns = ["group", "name", "class"] + list(LATENCY_FIELDS)
    rows = [[entry.get(name) for name in columns] for entry in _report(report).get("latency", [])]
    return _frame(rows, columns)


def kernels(report):
    """The GPU kernels and copies: the latency table's rows of group `gpu`
    (time on the GPU, per kernel) and `kernel` (the host's launch latency),
    largest total first. Empty for a job that launched nothing on a GPU."""
    table = latency(report)
    return table[table["group"].isin(["gpu", "kernel"])].reset_index(drop=True)
