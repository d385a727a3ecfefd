#!/usr/bin/env python3
"""`profinject-analyze -j N` reads N files at once and merges them in file
order: every output (text, JSON, HTML, the CSV export, the messages on
stderr, the exit status) must be byte for byte that of `-j 1`, on the real
H100 jobs of tests/analyzer/fixtures/h100/, on a synthetic job of 96 ranks
(tools/benchmarks/gen_ranks.c) whose straggler must still be the planted
one, and on a folder with damaged files among good ones.

Run by ctest with PI_ANALYZE, PI_GEN_RANKS and PI_SOURCE in the environment.
PI_JOBS_STRESS=N runs only the stress class, N rounds (the ThreadSanitizer
pass of tools/test)."""
import csv
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ANALYZE = os.environ["PI_ANALYZE"]
GEN_RANKS = os.environ["PI_GEN_RANKS"]
SOURCE = os.environ["PI_SOURCE"]
H100 = os.path.join(SOURCE, "tests", "analyzer", "fixtures", "h100")
JOBS = (1, 2, 4)


def analyse(inputs, jobs, work, extra=(), chrome=False):
    """Every output of one run, in a folder of its own (named outputs relative to it, so that
    the messages naming them are the same whatever the run): the folder and the exit status."""
    out = os.path.join(work, f"j{jobs}")
    os.makedirs(out)
    args = [ANALYZE, "-j", str(jobs), *inputs, "--json", "report.json", "--html", "report.html",
            "--export", "tables", *extra]
    if chrome:
        args += ["--chrome-trace", "trace.json"]
    with open(os.path.join(out, "stdout"), "wb") as stdout, \
            open(os.path.join(out, "stderr"), "wb") as stderr:
        status = subprocess.run(args, cwd=out, stdout=stdout, stderr=stderr).returncode
    return out, status


def differences(first, second):
    """The files that differ or are missing between two output folders (recursively)."""
    compared = filecmp.dircmp(first, second)
    found = [os.path.join(first, n) for n in compared.left_only + compared.right_only]
    _, mismatch, errors = filecmp.cmpfiles(first, second, compared.common_files, shallow=False)
    found += [os.path.join(first, n) for n in mismatch + errors]
    for sub in compared.common_dirs:
        found += differences(os.path.join(first, sub), os.path.join(second, sub))
    return found


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class SameAsOneByOne(unittest.TestCase):
    """Helpers: the runs at -j 1, 2 and 4 of the same input, compared byte for byte."""

    def runs(self, inputs, extra=(), chrome=False):
        work = tempfile.mkdtemp(prefix="pi-jobs-")
        self.addCleanup(shutil.rmtree, work)
        runs = {jobs: analyse(inputs, jobs, work, extra, chrome) for jobs in JOBS}
        base, status = runs[1]
        for jobs in JOBS[1:]:
            out, other_status = runs[jobs]
            self.assertEqual(other_status, status, f"exit status at -j {jobs}")
            self.assertEqual(differences(base, out), [], f"outputs at -j {jobs} against -j 1")
        return base, status


class H100Jobs(SameAsOneByOne):
    """Real GPU jobs: the training process and its DataLoader workers, CUPTI and event timing,
    a torch.compile job with its compiler's processes."""

    def test_each_job_reads_the_same_in_parallel(self):
        folders = sorted(d for d in os.listdir(H100) if os.path.isdir(os.path.join(H100, d)))
        self.assertGreaterEqual(len(folders), 4)
        for folder in folders:
            with self.subTest(folder=folder):
                base, status = self.runs([os.path.join(H100, folder)])
                self.assertEqual(status, 0)
                with open(os.path.join(base, "report.json")) as f:
                    report = json.load(f)
                # not a vacuous match: every file was read, and the GPU section is there
                files = [n for n in os.listdir(os.path.join(H100, folder))
                         if n.endswith(".pitrace.zst")]
                self.assertEqual(len(report["processes"]), len(files))
                self.assertGreater(os.path.getsize(os.path.join(base, "stdout")), 1000)

    def test_exact_percentiles_read_the_same_in_parallel(self):
        # --exact keeps every duration: merged in file order, the values keep their order
        self.runs([os.path.join(H100, "train-pin-cupti")], extra=("--exact",))

    def test_with_the_chrome_trace_the_files_are_read_one_by_one(self):
        base, status = self.runs([os.path.join(H100, "train-pin-events")], chrome=True)
        self.assertEqual(status, 0)
        with open(os.path.join(base, "trace.json")) as f:
            self.assertGreater(len(json.load(f)["traceEvents"]), 1000)


class ManyRanks(SameAsOneByOne):
    RANKS, STEPS, STRAGGLER, DELAY_MS = 96, 150, 61, 30

    def test_the_straggler_and_the_export_are_the_same_in_parallel(self):
        directory = tempfile.mkdtemp(prefix="pi-jobs-ranks-")
        self.addCleanup(shutil.rmtree, directory)
        out = subprocess.run([GEN_RANKS, directory, str(self.RANKS), str(self.STEPS),
                              str(self.STRAGGLER), str(self.DELAY_MS), "2000"],
                             check=True, capture_output=True, text=True)
        planted = json.loads(out.stdout)
        base, status = self.runs([directory])
        self.assertEqual(status, 0)
        with open(os.path.join(base, "report.json")) as f:
            ranks = json.load(f)["ranks"]
        self.assertEqual(ranks["count"], self.RANKS)
        self.assertEqual(ranks["straggler"]["rank"], planted["straggler"])
        # the export: one row per rank, and every step of every rank, in file order
        tables = os.path.join(base, "tables")
        self.assertEqual(len(csv_rows(os.path.join(tables, "ranks.csv"))), self.RANKS)
        steps = csv_rows(os.path.join(tables, "steps.csv"))
        self.assertEqual(len(steps), self.RANKS * self.STEPS)
        straggler = [r for r in csv_rows(os.path.join(tables, "ranks.csv"))
                     if r["straggler"] == "true"]
        self.assertEqual([int(r["rank"]) for r in straggler], [planted["straggler"]])

    def test_a_gpu_job_on_two_hosts(self):
        # NCCL kernels' GPU time, the kernels table, clocks aligned across hosts
        directory = tempfile.mkdtemp(prefix="pi-jobs-gpu-")
        self.addCleanup(shutil.rmtree, directory)
        env = dict(os.environ, GEN_RANKS_GPU="1", GEN_RANKS_HOSTS="2")
        subprocess.run([GEN_RANKS, directory, "16", "60", "5", "30", "2000"], check=True,
                       capture_output=True, env=env)
        base, status = self.runs([directory])
        self.assertEqual(status, 0)
        self.assertGreater(len(csv_rows(os.path.join(base, "tables", "kernels.csv"))), 0)


class DamagedFiles(SameAsOneByOne):
    """A file that is no trace and one cut short among good ones: the same
    messages in the same order, the same exit status (2), the same report of the rest."""

    def test_messages_and_status_are_the_same_in_parallel(self):
        directory = tempfile.mkdtemp(prefix="pi-jobs-bad-")
        self.addCleanup(shutil.rmtree, directory)
        job = os.path.join(H100, "train-nopin")
        files = sorted(n for n in os.listdir(job) if n.endswith(".pitrace.zst"))
        inputs = []
        for i, name in enumerate(files):
            path = os.path.join(directory, f"{i:02d}-{name}")
            shutil.copy(os.path.join(job, name), path)
            inputs.append(path)
        with open(inputs[1], "rb") as f:
            whole = f.read()
        with open(inputs[1], "wb") as f:  # cut short inside a frame
            f.write(whole[:len(whole) * 2 // 3])
        foreign = os.path.join(directory, "01b-foreign.pitrace.zst")
        with open(foreign, "wb") as f:
            f.write(b"not a trace at all" * 100)
        inputs.insert(2, foreign)
        base, status = self.runs(inputs)
        self.assertEqual(status, 2)
        with open(os.path.join(base, "stderr")) as f:
            said = f.read()
        self.assertIn("foreign.pitrace.zst", said)
        self.assertIn("file ends inside a frame", said)


class BadJobs(unittest.TestCase):
    def test_a_bad_number_of_jobs_is_a_usage_error(self):
        trace = os.path.join(H100, "train-nopin")
        for bad in (["-j", "x"], ["--jobs", "-1"], ["-j", "1025"], ["-j2.5"], ["-j"]):
            with self.subTest(args=bad):
                run = subprocess.run([ANALYZE, trace, "--quiet", *bad], capture_output=True,
                                     text=True)
                self.assertEqual(run.returncode, 1)  # usage errors, as every other option's
                self.assertIn("--jobs takes a whole number from 0 to 1024", run.stderr)

    def test_zero_is_one_thread_per_cpu(self):
        trace = os.path.join(H100, "train-nopin")
        run = subprocess.run([ANALYZE, "-j", "0", trace, "--quiet"], capture_output=True)
        self.assertEqual(run.returncode, 0, run.stderr)


class Stress(unittest.TestCase):
    """Many small files, many threads, several rounds: for ThreadSanitizer (tools/test runs
    this class alone in its TSan build); each round must match the first."""

    def test_rounds_of_many_threads(self):
        rounds = int(os.environ.get("PI_JOBS_STRESS", "2"))
        directory = tempfile.mkdtemp(prefix="pi-jobs-stress-")
        self.addCleanup(shutil.rmtree, directory)
        env = dict(os.environ, GEN_RANKS_GPU="1")
        subprocess.run([GEN_RANKS, directory, "24", "20", "3", "30", "2000"], check=True,
                       capture_output=True, env=env)
        # and the H100 workers, with Python call sites and time (named by the symbolizer)
        for name in os.listdir(os.path.join(H100, "train-pin-cupti")):
            shutil.copy(os.path.join(H100, "train-pin-cupti", name), directory)
        first = None
        report = os.path.join(directory, "report.json")
        for _ in range(rounds):
            run = subprocess.run([ANALYZE, "-j", "4", directory, "--json", report],
                                 capture_output=True)
            self.assertEqual(run.returncode, 0, run.stderr.decode(errors="replace")[-3000:])
            self.assertNotIn(b"ThreadSanitizer", run.stderr)
            with open(report, "rb") as f:
                this = run.stdout + f.read()
            os.unlink(report)
            first = first or this
            self.assertEqual(this, first)


if __name__ == "__main__":
    if os.environ.get("PI_JOBS_STRESS"):
        sys.argv[1:1] = ["Stress"]
    unittest.main(verbosity=2)
