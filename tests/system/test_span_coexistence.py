"""Exact spans beside the other tools that trace Python.

Debuggers take sys.settrace, profilers sys.setprofile, coverage and debuggers a
sys.monitoring tool id (3.12+). The spans use none of them (they are wrappers where the
marked functions are defined), so with each of those tools active the job must end as
without the profiler, each tool must still see every call of the marked functions' own
code, and every call must still be one span. On each Python 3.8 to 3.13 found here, with
the tools started after the marked module was imported, and before it (its functions are
then marked while the tools run): tests/programs/span_tools.py, whose own count of its
calls is the truth."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from profiled_job import pythons, run_job  # noqa: E402

PRELOAD = os.environ["PI_PRELOAD"]
ANALYZE = os.environ["PI_ANALYZE"]
PROGRAM = os.path.join(os.environ["PI_SOURCE"], "tests", "programs", "span_tools.py")
FUNCTIONS = ("handle", "tiny", "outer", "inner", "boom", "Server.serve")
NAMED = ",".join("span_targets:" + name for name in FUNCTIONS)


def run(python, mode, profiled=True):
    """span_tools.py @mode run by @python: the job's JSON line, its stderr, and the rows of
    its spans.csv (None when not profiled)"""
    env = dict(os.environ, PROFINJECT_SPANS=NAMED)
    traces = tempfile.mkdtemp(prefix="pi-span-tools-")
    if profiled:
        env.update(LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
    # a hang is the failure this suite looks for: the job's stacks, not a ctest timeout
    done = run_job([python, PROGRAM, mode], timeout=60, env=env)
    assert done.returncode == 0, (python, mode, done.returncode, done.stderr[-3000:])
    job = json.loads(done.stdout.strip().splitlines()[-1])
    if not profiled:
        return job, done.stderr, None
    out = tempfile.mkdtemp(prefix="pi-span-tools-export-")
    subprocess.run([ANALYZE, traces, "--quiet", "--export", out], check=True,
                   capture_output=True)
    with open(os.path.join(out, "spans.csv")) as f:
        rows = [r for r in csv.DictReader(f) if int(r["pid"]) == job["pid"]]
    return job, done.stderr, rows


class ToolsThatTracePython(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runs = {(minor, mode): run(python, mode)
                    for minor, python in pythons() for mode in ("after", "before")}

    def test_every_python_version_was_run(self):
        minors = sorted({minor for minor, _ in self.runs})
        self.assertIn(sys.version_info[1], minors)
        if len(minors) < 6:
            raise unittest.SkipTest("only Python 3.%s found here, not 3.8 to 3.13" % minors)

    def test_the_job_ends_as_without_the_profiler(self):
        for (minor, mode), (job, stderr, _) in self.runs.items():
            with self.subTest(python=minor, tools=mode):
                self.assertEqual(job["python"], [3, minor])
                self.assertTrue(job["right"], "a marked function returned a wrong result")
                # no tool was displaced: each is still the one the job installed
                self.assertTrue(all(job["still_installed"].values()), job["still_installed"])
                self.assertEqual(set(job["still_installed"]),
                                 {"settrace", "setprofile"} | ({"monitoring"} if minor >= 12
                                                               else set()))
                # nothing to say: no mark failed, no tool id was taken from anyone
                self.assertNotIn("not recorded", stderr)
                self.assertNotIn("no exact spans", stderr)

    def test_no_monitoring_tool_id_is_taken(self):
        # the job takes its tool id once the spans are marked (after), or first thing
        # (before): all six that tools may use (0 to 5) must be free then
        for (minor, mode), (job, _, _) in self.runs.items():
            if minor >= 12:
                with self.subTest(python=minor, tools=mode):
                    self.assertEqual(job["free_tool_ids"], [0, 1, 2, 3, 4, 5])

    def test_each_tool_sees_every_call(self):
        for (minor, mode), (job, _, _) in self.runs.items():
            for tool, counts in job["tools"].items():
                with self.subTest(python=minor, tools=mode, tool=tool):
                    self.assertEqual(counts, job["calls"])

    def test_every_call_is_a_span(self):
        for (minor, mode), (job, stderr, rows) in self.runs.items():
            with self.subTest(python=minor, tools=mode):
                self.assertEqual(job["marked"], {name: True for name in FUNCTIONS}, stderr)
                ours = {name: sum(r["name"] == "span_targets:" + name for r in rows)
                        for name in FUNCTIONS}
                self.assertEqual(ours, job["calls"])
                self.assertEqual([r["raised"] for r in rows if r["name"] == "span_targets:boom"],
                                 ["true"])
                self.assertEqual({r["kind"] for r in rows}, {"named"})

    def test_the_job_counts_the_same_without_the_profiler(self):
        # the job's own truth does not depend on the profiler: the same calls, and each tool
        # sees them all, with this Python alone
        job, _, _ = run(sys.executable, "after", profiled=False)
        self.assertTrue(job["right"])
        for tool, counts in job["tools"].items():
            self.assertEqual(counts, job["calls"], tool)
        self.assertEqual(job["calls"], self.runs[(sys.version_info[1], "after")][0]["calls"])


if __name__ == "__main__":
    from unittest_summary import main
    main()
