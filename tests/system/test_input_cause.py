#!/usr/bin/env python3
"""An input-bound verdict names its cause, from the workers' side. The
workload (tests/analyzer/workloads/worker_causes.py) starves its loop with
DataLoader workers that sleep, read a large file, or compute in
__getitem__, and times that work itself; the report must name that cause,
the line of __getitem__ (or of what it calls) that holds the workers, a
share of their time within 5 points of their own timers (from each worker's
start to its last sample: its wait to be told to stop is not the cause),
and how many workers would keep up: no fewer than it has. Run by ctest with the build's paths in the environment."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profiled_job import run_job  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
SOURCE = os.environ["PI_SOURCE"]
WORKLOADS = os.path.join(SOURCE, "tests", "analyzer", "workloads")
WORKLOAD = os.path.join(WORKLOADS, "worker_causes.py")
DATA = os.path.join(tempfile.gettempdir(), "pi-worker-causes.bin")
STEPS, WORKERS = 80, 2


def line_of(text):
    """The number of the workload's line that holds @text: the truth of where the time goes."""
    with open(WORKLOAD) as f:
        [number] = [i for i, line in enumerate(f, 1) if text in line]
    return number


def profile(cause, epochs=1):
    traces = tempfile.mkdtemp(prefix=f"pi-cause-{cause}-")
    job = run_job([sys.executable, WORKLOAD, cause, str(STEPS), str(WORKERS), DATA,
                   str(epochs)], timeout=300, cwd=WORKLOADS,
                  env=dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces))
    assert job.returncode == 0, job.stderr
    truth = json.loads(job.stdout)
    out = os.path.join(traces, "report.json")
    text = subprocess.run([ANALYZE, traces, "--json", out], check=True, capture_output=True,
                          text=True).stdout
    with open(out) as f:
        return truth, json.load(f), text


def own_share(truth):
    """The workers' own share of their working time (worker_init_fn to their last sample)
    spent on the planted work, all workers together."""
    workers = truth["workers"].values()
    return sum(w["work"] for w in workers) / sum(w["end"] - w["start"] for w in workers)


class InputBoundCause(unittest.TestCase):
    def check(self, cause, named, evidence, statement, function, epochs=1):
        truth, report, text = profile(cause, epochs)
        self.assertEqual(len(truth["workers"]), WORKERS)
        first = report["verdict"][0]
        self.assertEqual(first["kind"], "input-bound", first["summary"])
        self.assertEqual(first["pid"], truth["pid"])
        self.assertEqual(first.get("cause"), named, first["summary"])
        share = first["evidence"][evidence]
        self.assertAlmostEqual(share, own_share(truth), delta=0.05, msg=first["summary"])
        where = f"worker_causes.py:{line_of(statement)} in {function}"
        self.assertTrue(first.get("line", "").endswith(where), (first.get("line"), where))
        self.assertIn(where, first["summary"])
        # each batch holds a worker longer than the loop's step: as many workers as it has at
        # least (on this 2-core machine the workers' time per batch over the loop's step sits
        # near 2, so "more than it has" came out either way: 1.87 to 2.01 in six runs)
        figures = first["evidence"]
        self.assertGreaterEqual(figures["workers_to_keep_up"], WORKERS, first["summary"])
        # the advice asks for more workers exactly when more would keep up
        if figures["workers_to_keep_up"] > WORKERS:
            self.assertIn(f"num_workers={figures['workers_to_keep_up']:.0f} (now {WORKERS})",
                          first["advice"])
        else:
            self.assertNotIn("num_workers=", first["advice"])
        self.assertEqual(first["evidence"]["workers_at_once"], WORKERS)
        # each worker's table of Python time shown goes down to the dataset's function
        workers = [p["pid"] for p in report["processes"] if p["ppid"] == truth["pid"]]
        self.assertEqual(len(workers), WORKERS * epochs)
        tables = [text.split(f"PYTHON TIME (pid {pid},")[1].split("\n\n")[0] for pid in workers
                  if f"PYTHON TIME (pid {pid}," in text]
        self.assertTrue(tables, text)
        for table in tables:
            self.assertIn(f"{function} (", table, table)
        return first

    def test_sleeping_workers(self):
        first = self.check("sleep", "sleeping", "worker_sleeping_share", "time.sleep(0.02)",
                           "Causes.__getitem__")
        self.assertIn("remove the sleep", first["advice"])

    def test_workers_of_each_epoch(self):
        """Two epochs start two workers each: four processes, two at a time."""
        self.check("sleep", "sleeping", "worker_sleeping_share", "time.sleep(0.02)",
                   "Causes.__getitem__", epochs=2)

    def test_workers_reading_files(self):
        first = self.check("read", "reading files", "worker_reading_share", "f.readinto(buffer)",
                           "Causes.__getitem__")
        self.assertIn("cache the dataset", first["advice"])

    def test_workers_computing(self):
        first = self.check("compute", "computing", "worker_computing_share", "total += i * i",
                           "spin")
        self.assertIn("cheaper transforms", first["advice"])


if __name__ == "__main__":
    unittest.main()
