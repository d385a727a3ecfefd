#!/usr/bin/env python3
"""Summary mode (PROFINJECT_MODE=summary) against a job with known
distributions: tests/cuda_programs/prog_summary_job plants the GPU
durations of its kernels (the fake device runs each for the ns it is
given), a file's calls and bytes, and one slow step, and prints its own
truths. The report read from the summaries must give back the percentiles
within the documented bucket error, the counts exactly, and a detail
window holding the slow step's records in full.

Run by ctest with the build's paths in the environment."""
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cuda import report  # noqa: E402  the JSON report of a trace folder

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
PROGRAMS = os.environ["PI_PROGRAMS"]
# include/profinject/histogram_buckets.h: a bucket's midpoint is within 1/128 of any value in it
BUCKET_ERROR = 1 / 128


def record(mode, **env):
    traces = tempfile.mkdtemp()
    environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces,
                       PROFINJECT_MODE=mode, PROFINJECT_GPU_TIMING="events",
                       NVTX_INJECTION64_PATH=PRELOAD, **env)
    result = subprocess.run([os.path.join(PROGRAMS, "prog_summary_job"),
                             os.path.join(traces, "scratch")],
                            env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.endswith("ok\n"), result
    os.unlink(os.path.join(traces, "scratch"))
    truths = dict(line.split() for line in result.stdout.splitlines()[:-1])
    return traces, {k: float(v) for k, v in truths.items()}


def dump_lines(traces):
    [name] = os.listdir(traces)
    return subprocess.run([ANALYZE, "dump", os.path.join(traces, name)], check=True,
                          capture_output=True, text=True).stdout.splitlines()


def entry(rep, group, name, klass):
    [e] = [e for e in rep["latency"]
           if (e["group"], e["name"], e["class"]) == (group, name, klass)]
    return e


class SummaryMode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # every slow step may open a window, so that the planted one is not skipped for an
        # earlier one that was slower than the p99 by chance; detail ends at the next flush
        cls.traces, cls.truths = record("summary", PROFINJECT_SUMMARY_TRIGGER_GAP_S="0",
                                        PROFINJECT_SUMMARY_DETAIL_MS="0")
        cls.report = report(cls.traces)
        [cls.process] = cls.report["processes"]
        cls.dump = dump_lines(cls.traces)
        cls.full = report(record("full")[0])  # the same job recorded in full

    def test_a_frame_a_second_and_samples_200_ms_apart_unless_set(self):
        # what an all-day trace costs in frames and samples: the defaults in summary mode
        # (docs/settings.md), each setting still the user's to give
        said = {"summary": ("1000.0", "200.0"), "full": ("100.0", "50.0")}
        for mode, env, (flush, sample) in [("summary", {}, said["summary"]),
                                           ("full", {}, said["full"]),
                                           ("summary", {"PROFINJECT_SAMPLE_MS": "50",
                                                        "PROFINJECT_FLUSH_MS": "250"},
                                            ("250.0", "50.0"))]:
            lines = self.dump if (mode, env) == ("summary", {}) else dump_lines(
                record(mode, **env)[0])
            header = next(line for line in lines if line.startswith("flush every"))
            self.assertEqual(header, f"flush every {flush} ms, process sample every {sample} ms",
                             (mode, env))
            # the writer never samples faster than it says: a sample may be taken up to half
            # a gap early, to share a wake with a flush (writer.c), so one gap may be short,
            # but they keep to the schedule (the last one, at the process's end, apart)
            times = [float(line.split()[1]) for line in lines if " proc_sample " in line]
            self.assertGreater(len(times), 3, (mode, env))
            mean_gap = (times[-2] - times[0]) / (len(times) - 2)
            self.assertGreaterEqual(mean_gap, float(sample) / 1000 * 0.9, (mode, env, times))

    def test_written_as_summaries(self):
        kinds = [line.split()[3] for line in self.dump if len(line.split()) > 3]
        self.assertGreater(kinds.count("summary"), 0)
        # launches in summaries, not all in full: only the detail windows hold some (this
        # short job's steps are so alike that many are slower than the p99 of those before)
        self.assertLess(kinds.count("gpu_launch"), self.truths["work_count"])
        self.assertGreater(self.process["summary_mode"]["records_summarised"], 0)

    def test_percentiles_within_the_bucket_error(self):
        gpu = entry(self.report, "gpu", "work()", "kernel")
        for q in ("p50", "p90", "p99"):
            truth = self.truths[f"work_{q}_ns"]
            # the bucket error, and a hair for the clock's ticks-to-ns conversion
            self.assertAlmostEqual(gpu[f"{q}_ns"], truth, delta=truth * BUCKET_ERROR + 50,
                                   msg=q)

    def test_counts_exact(self):
        self.assertEqual(entry(self.report, "kernel", "work()", "launch")["count"],
                         self.truths["work_count"])
        self.assertEqual(entry(self.report, "kernel", "straggler()", "launch")["count"], 1)
        calls = self.truths["file_calls"] / 2
        for op in ("pwrite", "pread"):
            e = entry(self.report, "io", op, "file")
            self.assertEqual(e["count"], calls, op)
            self.assertEqual(e["bytes"], self.truths["file_bytes"] / 2, op)
        # GPU times: as many as the same job recorded in full (event pairs time each launch)
        self.assertEqual(entry(self.report, "gpu", "work()", "kernel")["count"],
                         entry(self.full, "gpu", "work()", "kernel")["count"])
        self.assertEqual(entry(self.report, "gpu", "straggler()", "kernel")["count"], 1)
        # steps are kept in full: the job's NVTX ranges, one a step
        self.assertEqual(self.process["steps"]["count"], self.truths["steps"])

    def test_verdicts_and_step_gpu_time_as_in_full(self):
        self.assertEqual([f["kind"] for f in self.report["verdict"]],
                         [f["kind"] for f in self.full["verdict"]])
        # a summary's GPU time is spread over its span: the steps' sum stays the job's
        [full] = self.full["processes"]
        self.assertAlmostEqual(self.process["steps"]["steady"]["gpu_ns"],
                               full["steps"]["steady"]["gpu_ns"],
                               delta=0.03 * full["steps"]["steady"]["gpu_ns"])

    def test_slow_step_window_holds_its_records(self):
        start_line = [line for line in self.dump if line.startswith("started:")][0]
        origin = int(start_line.split("monotonic ")[1].split()[0])
        slow_start = (self.truths["slow_step_start_ns"] - origin) / 1e9
        slow_end = (self.truths["slow_step_end_ns"] - origin) / 1e9
        slow_ns = self.truths["slow_step_end_ns"] - self.truths["slow_step_start_ns"]
        windows = [w for w in self.process["summary_mode"]["detail_windows"]
                   if w["reason"] == "slow step" and abs(w["step_ns"] - slow_ns) < 2e6]
        self.assertEqual(len(windows), 1, self.process["summary_mode"])
        [window] = windows
        # the straggler's launch, in full, inside the step the program timed and the window
        [launch] = [line.split() for line in self.dump
                    if " gpu_launch " in line and "_Z9stragglerv" in line]
        at = float(launch[1])
        self.assertGreaterEqual(at, slow_start)
        self.assertLessEqual(at, slow_end)
        self.assertGreaterEqual(at * 1e9, window["start_ns"])
        self.assertLessEqual(at * 1e9, window["end_ns"])
        # and the step's other launches with it: all 40 "work" kernels of that step
        work = [float(line.split()[1]) for line in self.dump
                if " gpu_launch " in line and "_Z4workv" in line]
        self.assertGreaterEqual(sum(slow_start <= t <= slow_end for t in work), 40)

    def test_text_report_says_what_comes_from_summaries(self):
        text = subprocess.run([ANALYZE, self.traces], check=True, capture_output=True,
                              text=True).stdout
        self.assertIn("SUMMARY MODE", text)
        self.assertIn("slow step of", text)
        # files read by two threads (-j 2) merge their summaries to the same report
        parallel = subprocess.run([ANALYZE, "-j", "2", self.traces, self.traces], check=True,
                                  capture_output=True, text=True).stdout
        one = subprocess.run([ANALYZE, "-j", "1", self.traces, self.traces], check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual(parallel, one)


class RequestedDetail(unittest.TestCase):
    def test_duration_window_keeps_everything_in_full(self):
        """run --duration in summary mode: detail from the start until then."""
        until = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 60 * 10**9
        traces, truths = record("summary", PROFINJECT_RECORD_UNTIL_NS=str(until))
        kinds = [line.split()[3] for line in dump_lines(traces) if len(line.split()) > 3]
        self.assertEqual(kinds.count("gpu_launch"), truths["work_count"] + 1)
        [process] = report(traces)["processes"]
        [window] = process["summary_mode"]["detail_windows"]
        self.assertEqual(window["reason"], "requested")


    def test_ctl_capture_opens_a_window(self):
        """profinject ctl PID capture in summary mode: a window of full detail, summaries go on."""
        launcher = os.environ["PI_LAUNCHER"]
        out = tempfile.mkdtemp()
        run = subprocess.Popen([launcher, "run", "--summary", "-o", out, "--",
                                os.path.join(PROGRAMS, "prog_loop")],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            self.assertEqual(run.stdout.readline(), "started\n")
            pid = None
            for _ in range(100):  # the program is the launcher's child
                with open(f"/proc/{run.pid}/task/{run.pid}/children") as f:
                    children = f.read().split()
                if children:
                    pid = int(children[0])
                    break
                time.sleep(0.05)
            time.sleep(0.5)  # the control socket comes at the writer's first flush
            ctl = subprocess.run([launcher, "ctl", str(pid), "capture", "300ms"],
                                 capture_output=True, text=True)
            self.assertEqual(ctl.returncode, 0, ctl.stderr)
            time.sleep(1.5)  # closed at the writer's flush after the 300 ms
        finally:
            if pid:
                os.kill(pid, 9)
            run.wait()
            run.stdout.close()
        rep = report(out)
        [process] = rep["processes"]
        [window] = process["summary_mode"]["detail_windows"]
        self.assertEqual(window["reason"], "requested")
        self.assertGreaterEqual(window["end_ns"] - window["start_ns"], 300e6)
        self.assertLess(window["end_ns"] - window["start_ns"], 1.5e9 + 0.5e9)


if __name__ == "__main__":
    unittest.main(verbosity=2)
