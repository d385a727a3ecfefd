"""profinject from Python: the command's files inside this package, and the
JSON report as data.

    import profinject
    report = profinject.load_report("report.json")   # or profinject.analyze("traces")
    profinject.steps(report)     # pandas DataFrames, where pandas is installed
    profinject.kernels(report)
    profinject.latency(report)

The report's fields are described in analyzer/REPORT.md of the source tree.
"""
from ._native import analyzer_path, launcher_path, library_path
from ._report import (SCHEMA, SCHEMA_VERSION, ReportError, analyze, kernels, latency,
                      load_report, steps)

__all__ = ["SCHEMA", "SCHEMA_VERSION", "ReportError", "analyze", "analyzer_path", "kernels",
           "latency", "launcher_path", "library_path", "load_report", "steps"]
