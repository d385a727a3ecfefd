#!/usr/bin/env python3
"""`profinject-analyze partial` on each trace as a task of a Dask cluster
(a LocalCluster of worker processes: an engine from PyPI, no scheduler of
our own), then `merge`: text, JSON and HTML must be byte for byte those of
`profinject-analyze -j 4` on all the traces at once (the same analyzer's
whole analysis is the truth), and the exit status the same, on the real
fixture jobs of tests/analyzer/fixtures/ (the H100 ones, the loaded
ones, a format 1 trace), on PyTorch loops recorded here with the
framework's own calls (steps by optimizer step, evaluation loops inside
them, torch.compile's compilations), on 1,000 synthetic ranks
(tools/benchmarks/gen_ranks.c), with options, with files given in an
order of their own and with a trace cut short. Partials of another
version, cut short, or a folder without any are refused, each with its
reason and a non-zero exit.

Run by ctest with PI_ANALYZE, PI_GEN_RANKS, PI_PRELOAD and PI_SOURCE in the
environment."""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from dask.distributed import Client, LocalCluster

ANALYZE = os.environ["PI_ANALYZE"]
GEN_RANKS = os.environ["PI_GEN_RANKS"]
SOURCE = os.environ["PI_SOURCE"]
H100 = os.path.join(SOURCE, "tests", "analyzer", "fixtures", "h100")
OUTPUTS = ("stdout", "report.json", "report.html")
# ranks with CUDA, NCCL and cuBLAS records (gen_ranks.c): the GPU parts of the partials too
GPU_RANKS = dict(os.environ, GEN_RANKS_GPU="1")


def make_partial(analyze, trace, out, options):
    """The map task, run on a Dask worker process: one trace's partial; its exit status."""
    return subprocess.run([analyze, "partial", *options, trace, "-o", out],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode


def report(args, out):
    """Every output of one analyzer run in the folder @out (outputs named relative to it);
    the exit status."""
    os.makedirs(out)
    with open(os.path.join(out, "stdout"), "wb") as stdout:
        return subprocess.run([ANALYZE, *args, "--json", "report.json", "--html", "report.html"],
                              cwd=out, stdout=stdout, stderr=subprocess.DEVNULL).returncode


class PartialMerge(unittest.TestCase):
    client = None

    @classmethod
    def setUpClass(cls):
        # worker processes, one task at a time each: the map as a cluster would run it
        cls.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        cls.client = Client(cls.cluster)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.close()

    def work(self):
        work = tempfile.mkdtemp(prefix="pi-partial-")
        self.addCleanup(shutil.rmtree, work)
        return work

    def map_partials(self, traces, parts, options=()):
        """partial on every trace as Dask tasks: their exit statuses, in the traces' order."""
        os.makedirs(parts, exist_ok=True)
        futures = self.client.map(make_partial, [ANALYZE] * len(traces), traces,
                                  [parts] * len(traces), [list(options)] * len(traces),
                                  pure=False)
        return self.client.gather(futures)

    def assert_same(self, whole_args, merge_args, work):
        whole = report(["-j", "4", *whole_args], os.path.join(work, "whole"))
        merged = report(["merge", *merge_args], os.path.join(work, "merged"))
        self.assertEqual(merged, whole, "merge's exit status against the whole analysis's")
        _, mismatch, errors = filecmp.cmpfiles(os.path.join(work, "whole"),
                                               os.path.join(work, "merged"), OUTPUTS,
                                               shallow=False)
        self.assertEqual(mismatch + errors, [], "merge's outputs against the whole analysis's")
        with open(os.path.join(work, "whole", "stdout"), "rb") as f:
            self.assertGreater(len(f.read()), 1000, "a report was written")
        return whole

    @staticmethod
    def traces_in(folder):
        return sorted(os.path.join(folder, n) for n in os.listdir(folder)
                      if n.endswith(".pitrace.zst"))

    def test_fixture_jobs(self):
        """Real host and GPU records: the H100 jobs (DataLoader workers, CUPTI and event timing,
        compiling), the loaded CPU jobs, a format 1 trace."""
        fixtures = os.path.dirname(H100)
        jobs = [os.path.join(root, d) for root in (H100, os.path.join(fixtures, "loaded"))
                for d in sorted(os.listdir(root)) if os.path.isdir(os.path.join(root, d))]
        self.assertGreaterEqual(len(jobs), 7)
        jobs.append(os.path.join(fixtures, "format1-cuda-runtime.pitrace.zst"))
        for job in jobs:
            with self.subTest(job=os.path.basename(job)):
                work = self.work()
                traces = self.traces_in(job) if os.path.isdir(job) else [job]
                parts = os.path.join(work, "parts")
                self.assertEqual(self.map_partials(traces, parts), [0] * len(traces))
                self.assertEqual(self.assert_same([job], [parts], work), 0)

    def test_loops_with_the_frameworks_own_calls(self):
        """Traces recorded now, with spans: evaluation loops inside training steps, and
        torch.compile compiling again."""
        program = os.path.join(SOURCE, "tests", "programs", "span_training.py")
        for mode in ("evaluate", "compile"):
            with self.subTest(mode=mode):
                work = self.work()
                traces = os.path.join(work, "traces")
                subprocess.run([sys.executable, program, mode], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=dict(os.environ, LD_PRELOAD=os.environ["PI_PRELOAD"],
                                        PROFINJECT_OUTPUT=traces))
                parts = os.path.join(work, "parts")
                found = self.traces_in(traces)
                self.assertEqual(self.map_partials(found, parts), [0] * len(found))
                self.assertEqual(self.assert_same([traces], [parts], work), 0)
                with open(os.path.join(work, "whole", "report.json")) as f:
                    whole = json.load(f)
                # the traces hold what this test is for
                if mode == "evaluate":
                    trained = [p for p in whole["processes"] if p["steps"]["evaluation_steps"]]
                    self.assertEqual(len(trained), 1, whole["processes"])
                else:
                    self.assertTrue(any(c["frame"] for ph in whole["phases"]
                                        for c in ph["compilations"]), whole["phases"])

    def test_h100_options(self):
        """--exact and --warmup given to partial count as given to report."""
        work = self.work()
        folder = os.path.join(H100, "train-pin-cupti")
        parts = os.path.join(work, "parts")
        options = ["--exact", "--warmup", "3"]
        self.assertEqual(set(self.map_partials(self.traces_in(folder), parts, options)), {0})
        self.assert_same([folder, *options], [parts], work)

    def test_thousand_ranks(self):
        """1,000 GPU ranks of a synthetic distributed job, its straggler planted."""
        work = self.work()
        traces = os.path.join(work, "traces")
        subprocess.run([GEN_RANKS, traces, "1000", "20", "617", "30"], check=True, env=GPU_RANKS,
                       stdout=subprocess.DEVNULL)
        files = self.traces_in(traces)
        self.assertEqual(len(files), 1000)
        parts = os.path.join(work, "parts")
        self.assertEqual(set(self.map_partials(files, parts)), {0})
        self.assertEqual(len(os.listdir(parts)), 1000)
        self.assertEqual(self.assert_same([traces], [parts], work), 0)
        with open(os.path.join(work, "merged", "report.json")) as f:
            ranks = json.load(f)["ranks"]
        self.assertEqual(ranks["count"], 1000)
        self.assertEqual(ranks["straggler"]["rank"], 617, "the planted straggler")

    def test_files_in_their_order(self):
        """Partials named one by one are merged in the order given, as report reads traces."""
        work = self.work()
        traces = os.path.join(work, "traces")
        subprocess.run([GEN_RANKS, traces, "12", "20", "3", "30"], check=True,
                       stdout=subprocess.DEVNULL)
        files = self.traces_in(traces)[::-1]
        parts = os.path.join(work, "parts")
        self.assertEqual(set(self.map_partials(files, parts)), {0})
        named = [os.path.join(parts, os.path.basename(t).replace(".pitrace.zst", ".pipartial"))
                 for t in files]
        self.assert_same(files, named, work)

    def test_trace_cut_short(self):
        """A trace cut short inside a frame: its partial keeps what was read, as report keeps
        it (a warning, the file counted as truncated), and the merge reports the same."""
        work = self.work()
        traces = os.path.join(work, "traces")
        shutil.copytree(os.path.join(H100, "train-pin-cupti"), traces)
        files = self.traces_in(traces)
        largest = max(files, key=os.path.getsize)
        with open(largest, "r+b") as f:
            f.truncate(os.path.getsize(largest) * 2 // 3)
        parts = os.path.join(work, "parts")
        self.assertEqual(set(self.map_partials(files, parts)), {0})
        self.assertEqual(self.assert_same([traces], [parts], work), 0)
        with open(os.path.join(work, "merged", "stdout")) as f:
            self.assertIn("trace file ends in the middle of a frame", f.read())


class Refusals(unittest.TestCase):
    """What merge will not read, each said with its reason, and exit status 2."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="pi-partial-bad-")
        trace = PartialMerge.traces_in(os.path.join(H100, "train-nopin"))[0]
        cls.good = os.path.join(cls.work, "good.pipartial")
        subprocess.run([ANALYZE, "partial", trace, "-o", cls.good], check=True,
                       stderr=subprocess.DEVNULL)
        with open(cls.good, "rb") as f:
            cls.data = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work)

    def merge(self, data, name):
        folder = tempfile.mkdtemp(dir=self.work)
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        run = subprocess.run([ANALYZE, "merge", folder], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertEqual(run.stdout, "", "no report from what cannot be read")
        return run.stderr

    def test_good_one_reads(self):
        run = subprocess.run([ANALYZE, "merge", self.good], capture_output=True)
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_other_partial_format(self):
        self.assertEqual(self.data[8], 1, "the format's version follows the mark")
        data = self.data[:8] + bytes([99]) + self.data[9:]
        self.assertIn("partial format 99, this analyzer reads format 1", self.merge(data, "v.pipartial"))

    def test_other_analyzer_version(self):
        length = self.data[9] - 1  # the analyzer's version: length + 1, then its bytes
        version = self.data[10:10 + length]
        other = b"9" * length
        self.assertNotEqual(version, other)
        data = self.data[:10] + other + self.data[10 + length:]
        said = self.merge(data, "a.pipartial")
        self.assertIn("written by analyzer " + other.decode(), said)
        self.assertIn("make it again with this analyzer", said)

    def test_other_model(self):
        """The same version built with another model: the sizes' fingerprint differs."""
        at = 10 + self.data[9] - 1 + 1  # past the analyzer's version and the trace format
        data = self.data[:at] + bytes([self.data[at] ^ 0x01]) + self.data[at + 1:]
        self.assertIn("written by another build of this analyzer version",
                      self.merge(data, "m.pipartial"))

    def test_read_failed_is_said_by_merge(self):
        """A partial of a trace with a read error partway: the report of what was read, and
        exit status 2, as report gives for that trace."""
        def varint_end(at):
            while self.data[at] & 0x80:
                at += 1
            return at + 1
        at = varint_end(8)                        # the partial format
        at = varint_end(at) + self.data[9] - 1    # the analyzer's version
        at = varint_end(varint_end(at))           # the trace format, the model
        at = varint_end(varint_end(at))           # --exact, --warmup
        length = 0
        for shift, byte in enumerate(self.data[at:at + 10]):
            length |= (byte & 0x7f) << (7 * shift)
            if not byte & 0x80:
                break
        at = varint_end(at) + length - 1          # the trace's path
        self.assertEqual(self.data[at], 0, "read to its end")
        data = self.data[:at] + bytes([2]) + self.data[at + 1:]  # zigzag: 1
        folder = tempfile.mkdtemp(dir=self.work)
        with open(os.path.join(folder, "failed.pipartial"), "wb") as f:
            f.write(data)
        run = subprocess.run([ANALYZE, "merge", folder], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2, run.stderr)
        good = subprocess.run([ANALYZE, "merge", self.good], capture_output=True, text=True)
        self.assertEqual(run.stdout, good.stdout, "the same report of what was read")

    def test_cut_short(self):
        for keep in (4, len(self.data) // 2, len(self.data) - 1):
            with self.subTest(keep=keep):
                said = self.merge(self.data[:keep], "cut.pipartial")
                self.assertIn("truncated", said)

    def test_bytes_after_the_end(self):
        self.assertIn("bytes after the END mark", self.merge(self.data + b"x", "long.pipartial"))

    def test_not_a_partial(self):
        with open(PartialMerge.traces_in(os.path.join(H100, "train-nopin"))[0], "rb") as f:
            self.assertIn("not a partial file", self.merge(f.read(), "trace.pipartial"))

    def test_folder_without_partials(self):
        folder = tempfile.mkdtemp(dir=self.work)
        run = subprocess.run([ANALYZE, "merge", folder], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("no partial files (*.pipartial) in it", run.stderr)

    def test_options_differ(self):
        trace = PartialMerge.traces_in(os.path.join(H100, "train-nopin"))[1]
        exact = os.path.join(self.work, "exact.pipartial")
        subprocess.run([ANALYZE, "partial", "--exact", trace, "-o", exact], check=True,
                       stderr=subprocess.DEVNULL)
        run = subprocess.run([ANALYZE, "merge", self.good, exact], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("made with other options", run.stderr)

    def test_outputs_are_not_inputs(self):
        run = subprocess.run([ANALYZE, "merge", "--json", self.good, self.good],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn("refusing to overwrite it", run.stderr)
        with open(self.good, "rb") as f:
            self.assertEqual(f.read(), self.data)
        trace = os.path.join(self.work, "trace.pitrace.zst")
        shutil.copy(PartialMerge.traces_in(os.path.join(H100, "train-nopin"))[0], trace)
        run = subprocess.run([ANALYZE, "partial", trace, "-o", trace], capture_output=True,
                             text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn("is the input trace", run.stderr)

    def test_outputs_that_need_every_event(self):
        for option in ("--chrome-trace", "--export"):
            run = subprocess.run([ANALYZE, "merge", option, os.path.join(self.work, "x"),
                                  self.good], capture_output=True, text=True)
            self.assertEqual(run.returncode, 1)
            self.assertIn("needs every event", run.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
