#!/usr/bin/env python3
"""DataLoader workers in summary mode and in full, on the real example
(examples/pytorch_train.py, two workers, PyTorch's default non-persistent
workers: two new ones each epoch). A worker is a fork child: the names,
paths and stacks its parent made before the fork are in the parent's
trace file, which the worker's file names; its dataset reads are counted
by directory in summary mode. Truths: the dataset's files on disk and the
number of samples the job asked for, the example's source for the line
its workers sleep at, and the job's own step count. Run by ctest with the
build's paths in the environment."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profiled_job import run_job  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
SOURCE = os.environ["PI_SOURCE"]
EXAMPLE = os.path.join(SOURCE, "examples", "pytorch_train.py")
DATA = os.path.join(tempfile.gettempdir(), "pi-summary-workers-data")
SAMPLES, EPOCHS, DELAY_MS = 256, 2, 4


def sleep_line():
    """The example's line where a worker sleeps for each sample, from its source."""
    with open(EXAMPLE) as f:
        for number, line in enumerate(f, 1):
            if "time.sleep(self.delay_s)" in line:
                return f"pytorch_train.py:{number}"
    raise AssertionError("the example no longer sleeps in __getitem__")


def profile(mode):
    """Run the job in @mode; its traces' directory and its own figures."""
    traces = tempfile.mkdtemp(prefix=f"pi-workers-{mode}-")
    summary = os.path.join(tempfile.mkdtemp(), "job.json")
    job = run_job([sys.executable, EXAMPLE, "--data-dir", DATA, "--samples", str(SAMPLES),
                   "--epochs", str(EPOCHS), "--batch-size", "16", "--delay-ms", str(DELAY_MS),
                   "--summary", summary], timeout=300,
                  env=dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces,
                           PROFINJECT_MODE=mode))
    assert job.returncode == 0, job.stderr
    with open(summary) as f:
        return traces, json.load(f)


def report(traces):
    """The JSON report and what the analyzer said on stderr."""
    out = os.path.join(tempfile.mkdtemp(), "report.json")
    done = subprocess.run([ANALYZE, traces, "--quiet", "--json", out], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    with open(out) as f:
        return json.load(f), done.stderr


class Workers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # the dataset written beforehand, untraced: the jobs only read it
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                        "import pytorch_train; pytorch_train.write_dataset(sys.argv[2], "
                        "int(sys.argv[3]))", os.path.dirname(EXAMPLE), DATA, str(SAMPLES)],
                       check=True)
        cls.runs = {mode: profile(mode) for mode in ("summary", "full")}

    def workers(self, mode):
        traces, truth = self.runs[mode]
        rep, _ = report(traces)
        return [p for p in rep["processes"] if p["ppid"] == truth["pid"]], rep, truth

    def test_summary_mode_counts_the_workers_reads_by_directory(self):
        """Every sample is read once an epoch: the directory's opens and bytes are the job's
        samples and the files' sizes on disk, and no file of it is listed alone."""
        sizes = [os.path.getsize(os.path.join(DATA, f"sample_{i:06d}.bin"))
                 for i in range(SAMPLES)]
        workers, rep, _ = self.workers("summary")
        self.assertEqual(len(workers), 2 * EPOCHS, "two new workers an epoch")
        directory = os.path.realpath(DATA) + "/"
        [entry] = [f for f in rep["files"] if f["path"] == directory]
        self.assertEqual(entry["opens"], SAMPLES * EPOCHS)
        # read() calls return the file, then 0 at its end: the bytes are the files'
        self.assertEqual(entry["bytes"], sum(sizes) * EPOCHS)
        self.assertEqual([f["path"] for f in rep["files"] if f["path"].startswith(directory)
                          and f["path"] != directory], [])
        # in full mode, the same reads file by file
        full_workers, full, _ = self.workers("full")
        per_file = [f for f in full["files"] if f["path"].startswith(directory)]
        self.assertEqual(len(per_file), SAMPLES)
        self.assertEqual(sum(f["opens"] for f in per_file), SAMPLES * EPOCHS)
        self.assertEqual(sum(f["bytes"] for f in per_file), sum(sizes) * EPOCHS)

    def test_verdict_steps_and_cause_as_in_full_mode(self):
        """The workers sleep at the example's sleep line: both modes say input-bound, the
        workers mostly sleeping, at that line, and find the job's own steps."""
        line = sleep_line()
        for mode in ("summary", "full"):
            with self.subTest(mode=mode):
                workers, rep, truth = self.workers(mode)
                [main] = [p for p in rep["processes"] if p["pid"] == truth["pid"]]
                self.assertEqual(main["steps"]["count"], truth["steps"])
                verdict = rep["verdict"][0]
                self.assertEqual(verdict["kind"], "input-bound", verdict["summary"])
                self.assertEqual(verdict["cause"], "sleeping", verdict["summary"])
                self.assertIn(line + " in FileDataset.__getitem__", verdict["line"])
                self.assertGreater(verdict["evidence"]["worker_sleeping_share"], 0.8)
                self.assertEqual([w for w in workers if w.get("inherited_unresolved")], [])

    def test_imports_are_counted_by_package(self):
        """The job's imports in summary mode: a package's files are counted under its top
        directory, as many opens as full mode lists file by file (both runs import the same
        modules), and none of them is listed alone."""
        spec = importlib.util.find_spec("torch")  # where torch is installed, not imported
        package = os.path.dirname(os.path.realpath(spec.origin)) + "/"
        _, summary, _ = self.workers("summary")
        _, full, _ = self.workers("full")
        [entry] = [f for f in summary["files"] if f["path"] == package]
        self.assertEqual([f["path"] for f in summary["files"]
                          if f["path"].startswith(package) and f["path"] != package], [])
        per_file = [f for f in full["files"] if f["path"].startswith(package)]
        self.assertGreater(len(per_file), 100, "torch imports hundreds of modules")
        self.assertEqual(entry["opens"], sum(f["opens"] for f in per_file))

    def test_loop_waits_by_line_as_in_full_mode(self):
        """Summary mode counts the training loop's waits by their Python frames instead of
        writing each one's: the line the loop waits for data at, and how often it waits
        there, are full mode's."""
        counts = {}
        for mode in ("summary", "full"):
            _, rep, _ = self.workers(mode)
            by_line = {}
            for site in rep["wait_sites"]:
                if site["class"] == "data_wait":
                    line = site["stack"]["headline"]
                    by_line[line] = by_line.get(line, 0) + site["count"]
            counts[mode] = by_line
        self.assertEqual(sorted(counts["summary"]), sorted(counts["full"]))
        for line, full_count in counts["full"].items():
            self.assertAlmostEqual(counts["summary"][line], full_count, delta=0.05 * full_count,
                                   msg=line)

    def test_stacks_sampled_a_quarter_as_often_in_summary_mode(self):
        # each new call path is a stack defined in the trace: an all-day trace samples the
        # threads' native stacks every 40 ms of their CPU, not 10, and the main thread's
        # Python frames every 40 ms on average, not 10 (docs/settings.md)
        for mode, interval_ms in (("summary", 40), ("full", 10)):
            traces, truth = self.runs[mode]
            [main] = [n for n in os.listdir(traces) if f".{truth['pid']}." in n]
            dump = subprocess.run([ANALYZE, "dump", os.path.join(traces, main)],
                                  capture_output=True, text=True, check=True).stdout
            used = sorted(int(n) for n in re.findall(r" native_sample .*?cpu_ns=(\d+)", dump))
            self.assertGreater(len(used), 3, mode)
            self.assertAlmostEqual(used[len(used) // 2] / 1e6, interval_ms,
                                   delta=0.05 * interval_ms, msg=mode)
            # a Python time sample covers the time since the one before (drawn from half to
            # one and a half intervals; a few merge where the frames stayed the same)
            spans = sorted(int(n) for n in re.findall(
                rf" tid={truth['pid']} py_sample dur_ns=(\d+)", dump))
            self.assertGreater(len(spans), 10, mode)
            self.assertAlmostEqual(spans[len(spans) // 2] / 1e6, interval_ms,
                                   delta=0.2 * interval_ms, msg=mode)

    def test_a_workers_file_names_its_parents_and_says_when_it_is_missing(self):
        """Without the parent's file, the workers' files are read all the same: their
        inherited names are said to be unresolved, with the file that holds them, and no
        line is guessed."""
        traces, truth = self.runs["summary"]
        alone = tempfile.mkdtemp(prefix="pi-workers-alone-")
        parent = None
        for name in os.listdir(traces):
            if f".{truth['pid']}." in name:
                parent = name
            else:
                shutil.copy(os.path.join(traces, name), alone)
        self.assertIsNotNone(parent)
        rep, said = report(alone)
        self.assertEqual(rep["inputs"]["inherited_unresolved"], 2 * EPOCHS)
        self.assertIn(parent, said)
        for p in rep["processes"]:
            self.assertIn(parent, p["inherited_unresolved"])
        self.assertNotIn(sleep_line(), json.dumps(rep))
        # the workers' own figures do not need the names: their reads are all there
        directory = os.path.realpath(DATA) + "/"
        self.assertEqual(sum(f["opens"] for f in rep["files"] if f["path"] == directory),
                         SAMPLES * EPOCHS)


if __name__ == "__main__":
    from unittest_summary import main
    main()
