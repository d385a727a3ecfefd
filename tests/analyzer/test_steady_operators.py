#!/usr/bin/env python3
"""The compute-bound verdict's native operators are the steady steps', not start-up's.

workloads/startup_then_steps.py sorts a large tensor for 1.5 s of its CPU at start-up,
then runs DataLoader steps of matrix products and tanh, which never sort. The truth is
the job's own clock of its sort and its step count: the whole-run NATIVE CPU table
holds the sort's time, the verdict's list (over the steady steps) holds no sort, and
its first operator is a matrix product.

Run by ctest with the build's paths in the environment."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
SOURCE = os.environ["PI_SOURCE"]
WORKLOAD = os.path.join(SOURCE, "tests", "analyzer", "workloads", "startup_then_steps.py")


class SteadyOperators(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        traces = tempfile.mkdtemp()
        env = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces, OMP_NUM_THREADS="1")
        ran = subprocess.run([sys.executable, WORKLOAD], env=env, capture_output=True, text=True,
                             timeout=300, check=True)
        cls.own = json.loads(ran.stdout.splitlines()[-1])
        out = os.path.join(tempfile.mkdtemp(), "report.json")
        result = subprocess.run([ANALYZE, traces, "--json", out], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        cls.text = result.stdout
        with open(out) as f:
            cls.report = json.load(f)
        [cls.finding] = [f for f in cls.report["verdict"] if f["kind"] == "compute-bound"]

    def test_the_whole_run_table_holds_the_start_up_sort(self):
        [main] = [t for t in self.report["native_time"] if t["pid"] == self.finding["pid"]]
        sort_ns = sum(r["ns"] for r in main["operators"] if r["operator"].startswith("aten::sort"))
        # the job's clock spans its whole sorting loop, the interpreter's turns and the
        # allocator between the sorts included, which the samples name apart: at most that,
        # and most of it, less what the table says it could not name (samples lost on a
        # loaded machine, taken in the profiler's own code, not walked, without a stack)
        unnamed = main["lost_ns"] + main["profiler_ns"] + main["loader_ns"] + main["unnamed_ns"]
        self.assertLessEqual(sort_ns / 1e9, 1.1 * self.own["sort_s"] + 0.05, main)
        self.assertGreaterEqual(sort_ns / 1e9, 0.7 * self.own["sort_s"] - unnamed / 1e9, main)
        # none of it inside the steady steps
        steady = sum(r["steady_ns"] for r in main["operators"] if r["operator"].startswith("aten::sort"))
        self.assertEqual(steady, 0)
        self.assertIn("over the whole run", self.text)

    def test_the_verdict_names_the_steps_operators(self):
        summary = " ".join(self.finding["summary"].split())
        named = re.search(r"native operators by CPU over the steady steps[^:]*: (.*)", summary)
        self.assertIsNotNone(named, summary)
        self.assertEqual(self.finding["evidence"]["native_over_steady_steps"], 1)
        self.assertNotIn("sort", named.group(1))
        first = named.group(1).split(",")[0]
        self.assertRegex(first, r"gemm|aten::mm|aten::matmul", summary)
        steps = [p["steps"] for p in self.report["processes"] if p["pid"] == self.finding["pid"]][0]
        self.assertEqual(steps["count"], self.own["steps"])


if __name__ == "__main__":
    unittest.main()
