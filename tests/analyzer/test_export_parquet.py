#!/usr/bin/env python3
"""--export's tables as Parquet (--export-format): each one equal, row by row
and value by value, to the CSV the same run wrote; typed as REPORT.md says;
read back by pyarrow and DuckDB, where the job the generator planted
(tools/benchmarks/gen_ranks.c: its ranks, steps and straggler) is found again.
And what a user without pyarrow gets.

Run by ctest with PI_ANALYZE, PI_GEN_RANKS and PI_SOURCE in the environment."""
import csv
import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

import duckdb
import pyarrow
import pyarrow.parquet as pq

ANALYZE = os.environ["PI_ANALYZE"]
GEN_RANKS = os.environ["PI_GEN_RANKS"]
SOURCE = os.environ["PI_SOURCE"]
RANKS, STEPS, STRAGGLER, DELAY_MS = 8, 40, 5, 20


def documented_tables():
    """The tables REPORT.md's export section lists, by file stem."""
    with open(os.path.join(SOURCE, "analyzer", "REPORT.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("\n## Export"):]
    section = section[:section.index("\n## ", 1)]
    return set(re.findall(r"^\| `(\w+)\.csv` \|", section, re.M))


def export(traces, out, *options, python=sys.executable):
    env = dict(os.environ, PROFINJECT_PYTHON=python)
    return subprocess.run([ANALYZE, traces, "--quiet", "--export", out, *options],
                          capture_output=True, text=True, env=env)


def stems(folder, suffix):
    return {os.path.basename(p)[:-len(suffix)] for p in glob.glob(os.path.join(folder, "*" + suffix))}


def python_without_pyarrow(folder):
    """This Python without site-packages (so without pyarrow), as one path."""
    path = os.path.join(folder, "python-without-pyarrow")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class ParquetTables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pi-parquet-")
        cls.traces = os.path.join(cls.dir, "traces")
        env = dict(os.environ, GEN_RANKS_GPU="1")
        planted = subprocess.run([GEN_RANKS, cls.traces, str(RANKS), str(STEPS), str(STRAGGLER),
                                  str(DELAY_MS), "2000"], check=True, capture_output=True,
                                 text=True, env=env)
        cls.planted = json.loads(planted.stdout)
        cls.both = os.path.join(cls.dir, "both")
        cls.result = export(cls.traces, cls.both, "--export-format", "both")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_every_documented_table_in_both_forms(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertIn(f"wrote Parquet tables in {self.both}", self.result.stderr)
        self.assertEqual(stems(self.both, ".csv"), documented_tables())
        self.assertEqual(stems(self.both, ".parquet"), documented_tables())
        self.assertEqual(glob.glob(os.path.join(self.both, "*.partial")), [])

    def test_rows_and_values_equal_the_csv(self):
        convert = {pyarrow.int64(): int, pyarrow.float64(): float, pyarrow.string(): str,
                   pyarrow.bool_(): lambda text: {"true": True, "false": False}[text]}
        for table in documented_tables():
            with open(os.path.join(self.both, table + ".csv"), newline="") as f:
                reader = csv.reader(f)
                header = next(reader)
                text_rows = list(reader)
            parquet = pq.read_table(os.path.join(self.both, table + ".parquet"))
            self.assertEqual(parquet.schema.names, header, table)
            types = [convert[t] for t in parquet.schema.types]
            want = [[kind(value) for kind, value in zip(types, row)] for row in text_rows]
            got = [list(row.values()) for row in parquet.to_pylist()]
            self.assertEqual(got, want, table)
        # the generator's ranks have steps and kernels: rows were compared, not only headers
        self.assertEqual(pq.read_table(os.path.join(self.both, "steps.parquet")).num_rows,
                         RANKS * STEPS)
        self.assertGreater(pq.read_table(os.path.join(self.both, "kernels.parquet")).num_rows, 0)

    def test_columns_have_the_types_engines_read_without_options(self):
        for table in documented_tables():
            path = os.path.join(self.both, table + ".parquet")
            for name, kind, *_ in duckdb.sql(f"describe select * from '{path}'").fetchall():
                if name.endswith("_ns") or name in ("rank", "pid", "step", "calls", "steps"):
                    self.assertEqual(kind, "BIGINT", (table, name))
                elif name in ("warmup", "straggler"):
                    self.assertEqual(kind, "BOOLEAN", (table, name))
                elif name in ("job", "host", "kernel", "function", "dtype", "module_path"):
                    self.assertEqual(kind, "VARCHAR", (table, name))
                elif name.endswith("_per_s") or name in ("share", "flops"):
                    self.assertEqual(kind, "DOUBLE", (table, name))
                # Spark has no unsigned integers
                self.assertNotIn(kind, ("UBIGINT", "UINTEGER"), (table, name))

    def test_duckdb_finds_the_planted_job(self):
        steps = os.path.join(self.both, "steps.parquet")
        counts = dict(duckdb.sql(f"select rank, count(*) from '{steps}' group by rank").fetchall())
        self.assertEqual(counts, {rank: STEPS for rank in range(RANKS)})
        # each step's end on one time line: later than its start by its duration
        wrong = duckdb.sql(f"select count(*) from '{steps}' "
                           "where end_unix_ns - start_unix_ns != duration_ns").fetchall()[0][0]
        self.assertEqual(wrong, 0)
        ranks = os.path.join(self.both, "ranks.parquet")
        marked = duckdb.sql(f"select rank from '{ranks}' where straggler").fetchall()
        self.assertEqual(marked, [(self.planted["straggler"],)])
        # the straggler from the steps alone: the rank with the longest own time per step
        slowest = duckdb.sql(f"""
            select arg_max(rank, duration_ns - collective_wait_ns) as slowest, count(*) as n
            from '{steps}' where not warmup group by step""").fetchall()
        by_rank = {}
        for rank, _ in slowest:
            by_rank[rank] = by_rank.get(rank, 0) + 1
        self.assertEqual(max(by_rank, key=by_rank.get), STRAGGLER, by_rank)

    def test_parquet_alone_leaves_no_csv(self):
        out = os.path.join(self.dir, "parquet")
        result = export(self.traces, out, "--export-format", "parquet")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(stems(out, ".csv"), set())
        self.assertEqual(stems(out, ".parquet"), documented_tables())
        for table in documented_tables():
            self.assertTrue(pq.read_table(os.path.join(out, table + ".parquet")).equals(
                pq.read_table(os.path.join(self.both, table + ".parquet"))), table)

    def test_csv_alone_writes_no_parquet_and_says_nothing_of_it(self):
        out = os.path.join(self.dir, "csv")
        result = export(self.traces, out, "--export-format", "csv")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(stems(out, ".csv"), documented_tables())
        self.assertEqual(stems(out, ".parquet"), set())
        self.assertNotIn("Parquet", result.stderr)

    def test_the_default_writes_parquet_where_pyarrow_is(self):
        out = os.path.join(self.dir, "default")
        result = export(self.traces, out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(stems(out, ".parquet"), documented_tables())
        self.assertEqual(stems(out, ".csv"), documented_tables())

    def test_without_pyarrow_the_default_is_csv_and_one_line_why(self):
        out = os.path.join(self.dir, "no-pyarrow")
        result = export(self.traces, out, python=python_without_pyarrow(self.dir))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(stems(out, ".csv"), documented_tables())
        self.assertEqual(stems(out, ".parquet"), set())
        said = [line for line in result.stderr.splitlines() if "Parquet" in line]
        self.assertEqual(len(said), 1, result.stderr)
        self.assertIn("pip install pyarrow", said[0])

    def test_asking_for_parquet_without_pyarrow_fails_and_says_why(self):
        out = os.path.join(self.dir, "asked")
        result = export(self.traces, out, "--export-format", "parquet",
                        python=python_without_pyarrow(self.dir))
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("pip install pyarrow", result.stderr)
        # nothing lost: the CSV tables stay
        self.assertEqual(stems(out, ".csv"), documented_tables())

    def test_a_python_that_is_not_there_is_named(self):
        out = os.path.join(self.dir, "no-python")
        missing = os.path.join(self.dir, "no-such-python")
        result = export(self.traces, out, "--export-format", "both", python=missing)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(missing, result.stderr)
        self.assertIn("no such Python", result.stderr)

    def test_an_unknown_format_is_refused(self):
        result = export(self.traces, os.path.join(self.dir, "xml"), "--export-format", "xml")
        self.assertEqual(result.returncode, 1)  # a usage error
        self.assertIn("--export-format takes csv, parquet or both", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "xml")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
