"""Exact spans against the job's own clock.

The functions named by PROFINJECT_SPANS: every call counted, each call's duration
against the job's perf_counter around it (within 1% or 50 us), on each Python 3.8 to
3.13 found here, nested calls, a call that raised, calls on two threads. And the
steps of training loops with no DataLoader, from the framework's own calls: one per
optimizer step with three backward calls each, one per backward with no optimizer,
against the job's own count and clock, and the median micro-batch against the job's;
no_grad evaluation loops between steps; a torch.compile'd loop whose dynamo counters
(graph breaks, frames compiled) are the same with the library as without it, and its
reasons for compiling again. And the framework's own spans against the job's calls:
from_pretrained of a model and its tokenizer (each call, named after the class loaded,
timed), a DataLoader iterator's next() (each call, the one that ends each epoch raised,
timed without workers)."""
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from job_clock import (assert_agree, assert_ends_agree, assert_median_agrees,  # noqa: E402
                       few_preempted, unpreempted)
from profiled_job import analyzer_report, pythons  # noqa: E402

PRELOAD = os.environ["PI_PRELOAD"]
ANALYZE = os.environ["PI_ANALYZE"]
PROGRAMS = os.path.join(os.environ["PI_SOURCE"], "tests", "programs")
NAMED = ("span_targets:handle span_targets:outer,span_targets:inner,span_targets:boom,"
         "span_targets:Server.serve,span_targets:tiny,span_targets:grow")


def run(python, program, args=(), spans=None, profiled=True, summary=False):
    """@program run by @python: the job's JSON line, and its traces' folder (None when not
    profiled)"""
    traces = tempfile.mkdtemp(prefix="pi-spans-") if profiled else None
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if profiled:
        env.update(LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
    if spans:
        env["PROFINJECT_SPANS"] = spans
    if summary:
        env["PROFINJECT_MODE"] = "summary"
    done = subprocess.run([python, os.path.join(PROGRAMS, program), *args], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), traces, done.stderr


def export(traces):
    """the tables of `--export`, each a list of rows (dicts of text)"""
    out = tempfile.mkdtemp(prefix="pi-spans-export-")
    subprocess.run([ANALYZE, traces, "--quiet", "--export", out], check=True,
                   capture_output=True)
    tables = {}
    for name in ("spans", "steps"):
        with open(os.path.join(out, name + ".csv")) as f:
            tables[name] = list(csv.DictReader(f))
    return tables


def process(report, pid):
    [found] = [p for p in report["processes"] if p["pid"] == pid]
    return found


class NamedSpans(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runs = {}
        for minor, python in pythons():
            job, traces, stderr = run(python, "span_calls.py", spans=NAMED)
            cls.runs[minor] = (job, export(traces)["spans"], analyzer_report(ANALYZE, traces),
                               stderr)

    def rows(self, minor, name):
        job, rows, _, _ = self.runs[minor]
        return [r for r in rows if r["name"] == "span_targets:" + name and
                int(r["pid"]) == job["pid"]]

    def test_every_python_version_was_run(self):
        self.assertIn(sys.version_info[1], self.runs)
        if len(self.runs) < 6:
            raise unittest.SkipTest("only Python 3.%s found here, not 3.8 to 3.13" %
                                    sorted(self.runs))

    def test_every_call_is_counted(self):
        for minor, (job, _, report, stderr) in self.runs.items():
            spans = {s["name"]: s for s in process(report, job["pid"])["spans"]}
            for name, by_thread in job["timed"].items():
                calls = sum(len(t) for t in by_thread.values())
                with self.subTest(python=minor, name=name):
                    self.assertEqual(len(self.rows(minor, name)), calls, stderr)
                    self.assertEqual(spans["span_targets:" + name]["count"], calls)
                    self.assertEqual(spans["span_targets:" + name]["kind"], "named")

    def test_each_call_lasts_what_the_job_measured(self):
        for minor, (job, _, _, _) in self.runs.items():
            for name, by_thread in job["timed"].items():
                if name == "outer":
                    continue  # its own clock also holds the inner calls' perf_counter reads
                for tid, durations in by_thread.items():
                    rows = sorted((r for r in self.rows(minor, name) if r["tid"] == tid),
                                  key=lambda r: int(r["start_ns"]))
                    ours = [int(r["duration_ns"]) for r in rows]
                    with self.subTest(python=minor, name=name, tid=tid):
                        self.assertEqual(len(ours), len(durations))
                        # the span lies inside the job's timing: never longer
                        self.assertTrue(all(o <= d * 1e9 for o, d in zip(ours, durations)))
                        if tid != str(job["main_tid"]):
                            # two threads share the GIL: the job's timing also holds
                            # the waits for it before the call starts and after it ends
                            continue
                        pairs = unpreempted(list(zip(ours, durations)),
                                            job["preempted"][name][tid])
                        assert_agree(self, pairs)

    def test_cpu_time_where_it_is_read(self):
        # handle() sleeps a millisecond or two: long enough for the thread's CPU clock to be
        # read at each end; its CPU agrees with the job's thread_time() around it. tiny() is
        # too short: its CPU is not read after its first call, said by an empty cell
        for minor, (job, _, report, _) in self.runs.items():
            [(tid, truth)] = job["cpu"]["handle"].items()
            rows = sorted(self.rows(minor, "handle"), key=lambda r: int(r["start_ns"]))
            tiny = self.rows(minor, "tiny")
            spans = {s["name"]: s for s in process(report, job["pid"])["spans"]}
            with self.subTest(python=minor):
                self.assertTrue(all(r["cpu_ns"] != "" for r in rows))
                # the same allowance as for durations: a virtual CPU the host takes away
                # inside the job's bracket but outside the span is CPU time to the guest; a
                # call whose thread was made to wait for a CPU pays for the switch in CPU too
                pairs = unpreempted([(int(r["cpu_ns"]), t) for r, t in zip(rows, truth)],
                                    job["preempted"]["handle"][tid])
                assert_agree(self, pairs)
                self.assertEqual(spans["span_targets:handle"]["cpu_calls"], len(truth))
                self.assertEqual(len(tiny), job["tiny_calls"])
                unread = sum(r["cpu_ns"] == "" for r in tiny)
                self.assertGreaterEqual(unread, job["tiny_calls"] - 10)
                self.assertEqual(spans["span_targets:tiny"]["cpu_calls"],
                                 job["tiny_calls"] - unread)

    def test_resident_memory_each_call_kept(self):
        # grow() keeps 2 to 9 MiB more each call, each page written: the change the recorder
        # read at both ends agrees with the job's reads of statm around it, but for what the
        # job's reads and the threads beside it take meanwhile (within 1 MiB), and holds at
        # least what the call kept (the allocator may take more from the system than asked)
        for minor, (job, _, report, _) in self.runs.items():
            rows = sorted(self.rows(minor, "grow"), key=lambda r: int(r["start_ns"]))
            spans = {s["name"]: s for s in process(report, job["pid"])["spans"]}
            with self.subTest(python=minor):
                self.assertEqual(len(rows), len(job["grown"]))
                self.assertTrue(all(r["host_bytes_change"] != "" for r in rows), rows)
                off = [(r["host_bytes_change"], kept, truth)
                       for r, kept, truth in zip(rows, job["kept"], job["grown"])
                       if abs(int(r["host_bytes_change"]) - truth) > 1 << 20 or
                       int(r["host_bytes_change"]) < kept - (64 << 10)]
                self.assertFalse(off, off)
                row = spans["span_targets:grow"]
                self.assertEqual(row["host_calls"], len(job["grown"]))
                self.assertAlmostEqual(row["host_bytes_change"], sum(job["grown"]),
                                       delta=len(job["grown"]) << 20)
                # tiny() is far too short for the file to be read at each end
                tiny = self.rows(minor, "tiny")
                self.assertGreaterEqual(sum(r["host_bytes_change"] == "" for r in tiny),
                                        job["tiny_calls"] - 10)

    def test_nesting_and_an_exception(self):
        for minor in self.runs:
            with self.subTest(python=minor):
                self.assertEqual({r["depth"] for r in self.rows(minor, "inner")}, {"1"})
                self.assertEqual({r["depth"] for r in self.rows(minor, "outer")}, {"0"})
                self.assertEqual([r["raised"] for r in self.rows(minor, "boom")], ["true"])
                self.assertEqual({r["raised"] for r in self.rows(minor, "handle")}, {"false"})
                # an outer call holds its three inner ones
                outer = [int(r["duration_ns"]) for r in self.rows(minor, "outer")]
                inner = [int(r["duration_ns"]) for r in self.rows(minor, "inner")]
                self.assertGreaterEqual(sum(outer), sum(inner))

    def test_calls_on_two_threads_are_counted_on_each(self):
        for minor, (job, _, report, _) in self.runs.items():
            threads = job["timed"]["Server.serve"]
            rows = self.rows(minor, "Server.serve")
            with self.subTest(python=minor):
                self.assertEqual(len(threads), 2)
                self.assertNotIn(str(job["main_tid"]), threads)
                self.assertEqual({t: sum(r["tid"] == t for r in rows) for t in threads},
                                 {t: len(d) for t, d in threads.items()})
                spans = {s["name"]: s for s in process(report, job["pid"])["spans"]}
                self.assertEqual(spans["span_targets:Server.serve"]["threads"], 2)


class SummaryMode(unittest.TestCase):
    """Summary mode counts the calls of each name in histograms by interval: every call
    counted, the percentiles kept (within the histogram's resolution)."""

    def test_counts_and_percentiles_survive(self):
        job, traces, _ = run(sys.executable, "span_calls.py", spans=NAMED, summary=True)
        spans = {s["name"]: s for s in process(analyzer_report(ANALYZE, traces),
                                               job["pid"])["spans"]}
        for name, by_thread in job["timed"].items():
            durations = sorted(d for t in by_thread.values() for d in t)
            with self.subTest(name=name):
                ours = spans["span_targets:" + name]
                self.assertEqual(ours["count"], len(durations))
                if set(by_thread) != {str(job["main_tid"])}:
                    # calls on two threads that share the GIL: the job's timing also holds
                    # the waits for it around the call (as in the calls' own comparison)
                    continue
                median = durations[(len(durations) - 1) // 2]
                # the job's clock holds the call's own overhead: at most 50 us more
                self.assertLessEqual(abs(ours["p50_ns"] / 1e9 - median), 0.02 * median + 50e-6)
        self.assertEqual(spans["span_targets:tiny"]["count"], job["tiny_calls"])


class TrainingSteps(unittest.TestCase):
    """PyTorch's loops, with this Python (the project's, which has torch)."""

    runs = {}  # each mode's job, run once for the tests that read it

    def steps(self, mode):
        if mode not in self.runs:
            job, traces, _ = run(sys.executable, "span_training.py", [mode])
            report = analyzer_report(ANALYZE, traces)
            rows = [r for r in export(traces)["steps"] if int(r["pid"]) == job["pid"]]
            self.runs[mode] = (job, process(report, job["pid"]),
                               sorted(rows, key=lambda r: int(r["step"])))
        return self.runs[mode]

    def check_ends(self, job, rows):
        # step k ends where the job's clock read "ends"[k]; the steps' durations are the
        # gaps between those ends (the first step starts before the job's first reading)
        self.assertEqual(len(rows), len(job["ends"]))
        pairs = unpreempted([(r["end_unix_ns"], end) for r, end in zip(rows, job["ends"])],
                            job["preempted"])
        assert_ends_agree(self, *zip(*pairs))
        for r in rows:
            self.assertEqual(int(r["end_unix_ns"]) - int(r["start_unix_ns"]),
                             int(r["duration_ns"]))
        for before, after in zip(rows, rows[1:]):
            self.assertEqual(before["end_unix_ns"], after["start_unix_ns"])

    def test_gradient_accumulation(self):
        job, p, rows = self.steps("accumulate")
        self.assertEqual(p["steps"]["count"], job["optimizer_steps"])
        self.assertEqual(p["steps"]["found_from"], "optimizer step")
        self.assertEqual(p["steps"]["micro_batches"]["per_step_p50"], job["micro_batches"])
        self.assertEqual(p["steps"]["micro_batches"]["total"], job["backward_calls"])
        self.check_ends(job, rows)
        spans = {s["name"]: s for s in p["spans"]}
        self.assertEqual(spans["AdamW.step"]["count"], job["optimizer_steps"])
        self.assertEqual(spans["AdamW.step"]["kind"], "optimizer_step")
        self.assertEqual(spans["backward"]["count"], job["backward_calls"])
        self.assertEqual(spans["Sequential"]["count"], job["backward_calls"])
        self.assertEqual(spans["Sequential"]["kind"], "module")

    def test_the_median_micro_batch_is_the_jobs(self):
        # each micro-batch lasts from its step's start (the step before's end, as the
        # optimizer's post-hook read it) or the micro-batch before's backward return to its
        # own, by the job's clock; the first step has no start read, and the warm-up steps
        # are not in our figures
        job, p, _ = self.steps("accumulate")
        steps = p["steps"]
        durations, tails, preempted = [], [], []
        in_micro_batches = in_steps = 0
        for k in range(max(1, steps["warmup"]), len(job["ends"])):
            start, backward_ends, end = job["ends"][k - 1], job["backward_ends"][k], job["ends"][k]
            starts = [start] + backward_ends[:-1]
            durations += [b - a for a, b in zip(starts, backward_ends)]
            tails.append(end - backward_ends[-1])
            in_micro_batches += backward_ends[-1] - start
            in_steps += end - start
            preempted.append(job["preempted"][k])
        micro = steps["micro_batches"]
        self.assertEqual(micro["duration"]["count"], len(durations))
        self.assertEqual(micro["tail"]["count"], len(tails))
        few_preempted(preempted)
        assert_median_agrees(self, micro["duration"]["p50_ns"], durations)
        assert_median_agrees(self, micro["tail"]["p50_ns"], tails)
        # a step's two ends are each some microseconds apart on the two clocks
        self.assertAlmostEqual(micro["share"], in_micro_batches / in_steps, delta=0.01)

    def test_manual_sgd_has_a_step_per_backward(self):
        job, p, rows = self.steps("manual_sgd")
        self.assertEqual(p["steps"]["count"], job["backward_calls"])
        self.assertEqual(p["steps"]["found_from"], "backward")
        self.assertNotIn("optimizer_step", {s["kind"] for s in p["spans"]})
        self.check_ends(job, rows)

    def test_batches_make_the_steps_of_a_loop_without_an_optimizer(self):
        # a step per batch, from the entry of the next() that took it to the entry of the
        # one after, by the job's clock read right before each; the call that ended an
        # epoch ends its last step, zipped DataLoaders take a batch each for one step, and
        # the batch taken but not used by a loop that then left is none
        job, p, rows = self.steps("batches")
        self.assertEqual(p["steps"]["found_from"], "DataLoader next()")
        self.assertEqual(p["steps"]["count"], len(job["waits"]))
        self.assertEqual(len(rows), len(job["waits"]))
        self.assertFalse(p.get("requests"), "a batch loop serves no requests")
        def first(lists):
            return [x for each in lists for x in each[:-1]]

        def then(lists):
            return [x for each in lists for x in each[1:]]

        # a moment is read by each clock microseconds apart, before the call's work: a CPU
        # taken away inside the call (its workers', on this machine's few cores) moves
        # neither, a pause between the two readings is the one in 20 allowed
        readings = job["epochs"]
        assert_ends_agree(self, [r["start_unix_ns"] for r in rows], first(readings))
        assert_ends_agree(self, [r["end_unix_ns"] for r in rows], then(readings))
        # each step's wait for data is its next() call's, where it kept its CPU
        waits = [(r["data_wait_ns"], w, late)
                 for r, w, late in zip(rows, job["waits"], first(job["next_preempted"]))
                 if w is not None]
        assert_agree(self, unpreempted([w[:2] for w in waits], [w[2] for w in waits]))

    def test_evaluation_loops_between_steps(self):
        # no_grad loops of forwards every 10 steps, by the job's clock around each; a
        # teacher's no_grad forward inside every step is none
        job, p, rows = self.steps("evaluate")
        self.assertEqual(p["steps"]["count"], job["optimizer_steps"])
        loops = p["steps"]["evaluation_loops"]
        self.assertEqual(loops["count"], len(job["evaluation_s"]), loops)
        self.assertEqual([l["forwards"] for l in loops["loops"]],
                         [job["forwards"]] * len(job["evaluation_s"]))
        # the job's clock holds its loop's own bookkeeping around the first and last forward
        assert_agree(self, [(l["end_ns"] - l["start_ns"], s)
                            for l, s in zip(loops["loops"], job["evaluation_s"])])

    def test_steps_holding_an_evaluation_loop_are_not_steady(self):
        # the steady figures are the training steps': by the job's clock, each steady step
        # lasts from the optimizer step before's post-hook to its own; the steps that hold
        # an evaluation loop are counted apart
        job, p, _ = self.steps("evaluate")
        steps = p["steps"]
        self.assertEqual(steps["evaluation_steps"],
                         sum(k >= steps["warmup"] for k in job["holding"]))
        steady = [k for k in range(max(1, steps["warmup"]), len(job["ends"]))
                  if k not in job["holding"]]
        self.assertEqual(steps["steady"]["count"],
                         steps["count"] - steps["warmup"] - steps["evaluation_steps"])
        few_preempted([job["preempted"][k] for k in steady])
        durations = [job["ends"][k] - job["ends"][k - 1] for k in steady]
        assert_median_agrees(self, steps["steady"]["p50_ns"], durations)
        # the longest steady step is a training step, far from an evaluation loop's length
        self.assertLess(steps["steady"]["max_ns"] / 1e9, min(job["evaluation_s"]) / 2,
                        (steps["steady"], job["evaluation_s"]))

    def test_torch_compile_is_not_disturbed(self):
        alone, _, _ = run(sys.executable, "span_training.py", ["compile"], profiled=False)
        job, traces, _ = run(sys.executable, "span_training.py", ["compile"])
        for counter in ("graph_breaks", "frames_total", "unique_graphs"):
            self.assertEqual(job[counter], alone[counter], counter)
        self.assertEqual(job["graph_breaks"], 0)
        report = analyzer_report(ANALYZE, traces)
        p = process(report, job["pid"])
        compiles = [s for s in p["spans"] if s["kind"] == "compile"]
        self.assertEqual(sum(s["count"] for s in compiles), job["frames_total"], compiles)
        self.assertEqual(p["steps"]["count"], job["optimizer_steps"])
        modules = [s for s in p["spans"] if s["kind"] == "module"]
        self.assertEqual([(s["name"], s["count"]) for s in modules],
                         [("Sequential (compiled)", job["optimizer_steps"])])
        # why it compiled again, as dynamo's own metrics say (a new batch size)
        self.assertGreaterEqual(len(job["recompile_reasons"]), 1)
        [phases] = [ph for ph in report["phases"] if ph["pid"] == job["pid"]]
        self.assertEqual([r["reason"] for r in phases["recompile_reasons"]],
                         [reason[:400] for reason in job["recompile_reasons"]])
        # the phases count a compilation per frame dynamo compiled, however close together,
        # and one again per recompilation dynamo gave a reason for
        self.assertEqual(len(phases["compilations"]), job["frames_total"], phases["compilations"])
        self.assertEqual(sum(c["again"] for c in phases["compilations"]),
                         len(job["recompile_reasons"]))


def by_start(rows):
    return sorted(rows, key=lambda r: int(r["start_ns"]))


class FromPretrained(unittest.TestCase):
    """A model and its tokenizer loaded with from_pretrained (tests/programs/span_pretrained.py):
    one span a call, named after the class loaded, of kind from_pretrained, each as long as
    the job's own clock says where the call it timed is the one the span records."""

    @classmethod
    def setUpClass(cls):
        cls.job, traces, cls.stderr = run(sys.executable, "span_pretrained.py")
        rows = [r for r in export(traces)["spans"] if int(r["pid"]) == cls.job["pid"] and
                r["kind"] == "from_pretrained"]
        cls.rows = by_start(rows)
        # a from_pretrained may call another inside (the report counts both): the job's
        # calls are the outermost ones
        cls.outermost = [r for r in cls.rows if r["depth"] == "0"]
        cls.report = process(analyzer_report(ANALYZE, traces), cls.job["pid"])

    def test_one_span_a_call_named_after_the_class_loaded(self):
        calls, saved = self.job["calls"], self.job["saved"]
        self.assertEqual(saved["model"], "BertForSequenceClassification")
        # the Auto classes load the classes saved: the span names the class that loads
        self.assertEqual([c["class"] for c in calls], [saved[c["what"]] for c in calls])
        self.assertEqual([r["name"] for r in self.outermost],
                         [c["class"] + ".from_pretrained" for c in calls], self.stderr[-2000:])
        self.assertEqual({r["tid"] for r in self.outermost}, {str(self.job["tid"])})
        self.assertEqual({r["raised"] for r in self.outermost}, {"false"})

    def test_the_report_counts_them_by_name_and_kind(self):
        spans = {s["name"]: s for s in self.report["spans"]}
        made = collections.Counter(c["class"] + ".from_pretrained" for c in self.job["calls"])
        for name, count in made.items():
            with self.subTest(name=name):
                self.assertEqual(spans[name]["kind"], "from_pretrained")
                self.assertEqual(spans[name]["count"], sum(r["name"] == name for r in self.rows))
                self.assertEqual(sum(r["name"] == name for r in self.outermost), count)

    def test_each_call_lasts_what_the_job_measured(self):
        calls = self.job["calls"]
        self.assertEqual(len(self.outermost), len(calls))
        pairs = list(zip(self.outermost, calls))
        for row, call in pairs:
            # the Auto classes read the folder's config before the call the span records:
            # that span lies inside the job's timing, never longer
            self.assertLessEqual(int(row["duration_ns"]), call["seconds"] * 1e9, (row, call))
        for what in ("model", "tokenizer"):
            with self.subTest(what=what):
                timed = [(int(r["duration_ns"]), c["seconds"], c["preempted"]) for r, c in pairs
                         if c["how"] == "direct" and c["what"] == what]
                kept = unpreempted([(o, d) for o, d, _ in timed], [p for _, _, p in timed])
                assert_agree(self, kept)


class DataLoaderNext(unittest.TestCase):
    """A DataLoader read by hand with next() (tests/programs/span_dataloader.py), without
    workers and with two: one dataloader_next span a call, the call that ends each epoch
    (StopIteration) raised, each as long as the job's clock around next() without workers."""

    @classmethod
    def setUpClass(cls):
        cls.job, traces, cls.stderr = run(sys.executable, "span_dataloader.py")
        cls.all_rows = [r for r in export(traces)["spans"] if r["kind"] == "dataloader_next"]
        rows = by_start(r for r in cls.all_rows if int(r["pid"]) == cls.job["pid"])
        # the loaders were read one after the other, in the job's order: without workers first
        cls.loaders = {}
        for workers in ("0", "2"):
            count = len(cls.job["loaders"][workers]["calls"])
            cls.loaders[workers], rows = rows[:count], rows[count:]
        cls.left = rows

    def test_one_span_per_next_call(self):
        self.assertEqual(self.left, [])
        for workers, loader in self.job["loaders"].items():
            with self.subTest(num_workers=workers):
                self.assertTrue(loader["right"], "a batch was not the samples it should hold")
                # each epoch: a call per batch, and the one that raises
                self.assertEqual(len(loader["calls"]), loader["epochs"] * (loader["batches"] + 1))
                rows = self.loaders[workers]
                self.assertEqual(len(rows), len(loader["calls"]), self.stderr[-2000:])
                self.assertEqual({r["name"] for r in rows}, {"DataLoader.__next__"})
                self.assertEqual({r["depth"] for r in rows}, {"0"})

    def test_the_call_that_ends_each_epoch_raised(self):
        for workers, loader in self.job["loaders"].items():
            with self.subTest(num_workers=workers):
                raised = [r["raised"] == "true" for r in self.loaders[workers]]
                self.assertEqual(raised, [c["raised"] for c in loader["calls"]])
                self.assertEqual(sum(raised), loader["epochs"])

    def test_worker_processes_record_no_next_calls(self):
        # the workers make the batches; next() is the main process's own call
        self.assertEqual({r["pid"] for r in self.all_rows}, {str(self.job["pid"])})

    def test_each_call_lasts_what_the_job_measured(self):
        for workers, loader in self.job["loaders"].items():
            with self.subTest(num_workers=workers):
                rows, calls = self.loaders[workers], loader["calls"]
                self.assertEqual(len(rows), len(calls))
                pairs = [(int(r["duration_ns"]), c["seconds"]) for r, c in zip(rows, calls)]
                # inside the job's timing, never longer
                self.assertTrue(all(o <= d * 1e9 for o, d in pairs), pairs)
                if workers == "0":
                    assert_agree(self, unpreempted(pairs, [c["preempted"] for c in calls]))


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from unittest_summary import main
    main()
