#!/usr/bin/env python3
"""`profinject top`: a running job's figures from its processes' own
counters, against the job's own clock: a DataLoader loop whose workers
sleep (steps a second, its time in next()), and a loop on the stand-in CUDA
device with a known GPU share (6 ms of kernel, 4 ms of host work a step).
Its verdict now is the one the rules give the job's own shares, and the
one the analyzer gives the job's traces afterwards. The live view quits
cleanly on Ctrl-C, refuses what it cannot read, and its
screen is driven through a terminal (tmux) as a user would see it."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

LAUNCHER = os.environ["PI_LAUNCHER"]
ANALYZE = os.environ["PI_ANALYZE"]
LIBRARY = os.environ["PI_LIBRARY"]
PROGRAMS = os.environ["PI_PROGRAMS"]
FAKE_CUPTI = os.environ["PI_FAKE_CUPTI"]
PYTHON = os.environ.get("PI_PYTHON", sys.executable)
LOADER_JOB = os.path.join(os.environ["PI_SOURCE"], "tests", "programs", "live_loader_job.py")
BLOCKED_JOB = os.path.join(os.environ["PI_SOURCE"], "tests", "programs", "blocked_job.py")


def start(command, env=None):
    traces = tempfile.mkdtemp()
    job = subprocess.Popen(command, stdout=subprocess.PIPE, text=True,
                           env=dict(os.environ, LD_PRELOAD=LIBRARY, PROFINJECT_OUTPUT=traces,
                                    **(env or {})))
    pid = int(job.stdout.readline().split()[-1])
    return job, pid, traces


def first_verdict(traces):
    """The kind of the analyzer's first finding of what held the loop, for the traces of a
    job that ended (the jobs end by killing their workers: that death comes first)."""
    out = os.path.join(tempfile.mkdtemp(), "report.json")
    subprocess.run([ANALYZE, traces, "--quiet", "--json", out], capture_output=True, timeout=120,
                   check=True)
    with open(out) as f:
        return next(finding["kind"] for finding in json.load(f)["verdict"]
                    if finding["kind"] != "died")


def top_json(pid, *extra):
    result = subprocess.run([LAUNCHER, "top", "--once", "--json", *extra, str(pid)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return {p["pid"]: p for p in json.loads(result.stdout)}


def screen_once(session, text, seconds):
    """The tmux @session's screen once it shows @text, or as it is after @seconds."""
    screen = ""
    for _ in range(int(seconds / 0.2)):
        time.sleep(0.2)
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                capture_output=True, text=True).stdout
        if text in screen:
            break
    return screen


class DataLoaderJob(unittest.TestCase):
    mode = "full"

    @classmethod
    def setUpClass(cls):
        cls.job, cls.pid, cls.traces = start([PYTHON, LOADER_JOB, "6"],
                                             dict(PROFINJECT_MODE=cls.mode))
        time.sleep(1.5)
        cls.figures = top_json(cls.pid, "--interval", "3s")
        cls.own = json.loads(cls.job.stdout.readline())
        cls.job.wait(timeout=60)

    def test_steps_and_the_wait_for_data_within_10_percent(self):
        main = self.figures[self.pid]
        self.assertEqual((main["role"], main["mode"]), ("process", self.mode))
        self.assertAlmostEqual(main["steps_per_s"], self.own["steps_per_s"],
                               delta=0.1 * self.own["steps_per_s"], msg=(main, self.own))
        # blocked in next() waiting for its workers: its time there less its CPU and its wait
        # for a CPU there (under load the latter is a quarter of its time)
        self.assertAlmostEqual(main["main_thread"]["data_wait"], self.own["blocked_share"],
                               delta=0.1, msg=(main, self.own))
        self.assertLessEqual(main["main_thread"]["data_wait"], self.own["next_share"] + 0.05)
        self.assertEqual(main["leading"], "input-bound (waiting for data)")
        # the job blocked for data over its threshold: its rule, as the analyzer's afterwards
        self.assertGreater(self.own["blocked_share"], 0.15)
        self.assertEqual(main["verdict"], "input-bound")
        self.assertEqual(first_verdict(self.traces), "input-bound")
        self.assertGreater(main["window_steps"], 0)
        # each step waits for a batch of two 20 ms samples from one of two workers
        self.assertGreater(main["step_p50_ms"], 5)

    def test_the_workers_are_workers_that_sleep(self):
        workers = [p for p in self.figures.values() if p["ppid"] == self.pid]
        self.assertEqual(len(workers), 2, self.figures)
        for worker in workers:
            self.assertEqual(worker["role"], "worker")
            self.assertEqual(worker["steps_per_s"], 0, "a worker's index reads are no steps")
            self.assertEqual(worker["leading"], "asleep")
            self.assertEqual(worker["verdict"], "-", "a worker has no loop of its own")
            self.assertGreater(worker["main_thread"]["sleep"], 0.8, worker)


class DataLoaderJobInSummaryMode(DataLoaderJob):
    """The always-on case: the same figures, counted before the writer summarises."""
    mode = "summary"


class PausedJob(unittest.TestCase):
    """Started --paused, a job records nothing outside capture windows: top says it is
    paused rather than showing zeros as figures, and counts once a window opens."""

    def test_paused_then_counted_in_a_window(self):
        job, pid, _ = start([PYTHON, LOADER_JOB, "6"], dict(PROFINJECT_PAUSED="1"))
        try:
            time.sleep(1.0)
            paused = top_json(pid)[pid]
            subprocess.run([LAUNCHER, "ctl", str(pid), "start"], capture_output=True, timeout=30,
                           check=True)
            counted = top_json(pid)[pid]
            own = json.loads(job.stdout.readline())
        finally:
            job.kill()
            job.wait()
        self.assertEqual((paused["recording"], paused["verdict"]), (False, "paused"), paused)
        self.assertEqual(paused["steps_per_s"], 0)
        self.assertEqual((counted["recording"], counted["verdict"]), (True, "input-bound"),
                         counted)
        self.assertAlmostEqual(counted["steps_per_s"], own["steps_per_s"],
                               delta=0.2 * own["steps_per_s"], msg=(counted, own))


class BlockedJob(unittest.TestCase):
    """A main thread blocked for good (tests/programs/blocked_job.py, in a lock in
    blocked_in_lock()): top says what in and for how long, by this test's clock."""

    def test_what_the_main_thread_is_blocked_in_now(self):
        started = time.monotonic()
        job = subprocess.Popen([PYTHON, BLOCKED_JOB], stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ, LD_PRELOAD=LIBRARY,
                                        PROFINJECT_OUTPUT=tempfile.mkdtemp()))
        try:
            words = job.stdout.readline().split()
            said = time.monotonic()
            pid = int(words[1])
            time.sleep(1.5)
            before = time.monotonic()
            now = top_json(pid)[pid]
            after = time.monotonic()
        finally:
            job.kill()
            job.wait()
        self.assertEqual(now["main_blocked_in"], "a semaphore (a Python lock or queue)", now)
        # blocked since just after it said so (a loaded machine may run this test's read of
        # that late, never the job's block before its start) to the moment top asked
        self.assertGreaterEqual(now["main_blocked_s"], before - said - 0.1, now)
        self.assertLessEqual(now["main_blocked_s"], after - started, now)


class GpuJob(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.job, cls.pid, cls.traces = start([os.path.join(PROGRAMS, "prog_cuda_live"), "5"],
                                 dict(LD_LIBRARY_PATH=FAKE_CUPTI,
                                      NVTX_INJECTION64_PATH=LIBRARY))
        time.sleep(1.0)
        cls.figures = top_json(cls.pid, "--interval", "2s")
        # what it does now, from outside: a program without Python gets native frames
        cls.stacks = subprocess.run([LAUNCHER, "stacks", str(cls.pid)], capture_output=True,
                                    text=True, timeout=60)
        words = cls.job.stdout.readline().split()
        cls.job.wait(timeout=60)
        cls.own = {"steps_per_s": int(words[1]) / float(words[3]),
                   "sync_share": int(words[5]) / 1e9 / float(words[3])}

    def test_gpu_busy_and_the_wait_for_it_within_10_percent(self):
        main = self.figures[self.pid]
        self.assertAlmostEqual(main["steps_per_s"], self.own["steps_per_s"],
                               delta=0.1 * self.own["steps_per_s"], msg=(main, self.own))
        self.assertAlmostEqual(main["main_thread"]["sync"], self.own["sync_share"], delta=0.1,
                               msg=(main, self.own))
        # 6 ms of kernel a step (the stand-in device's own duration), over a second's steps
        busy = 0.006 * self.own["steps_per_s"]
        self.assertAlmostEqual(main["gpu_busy"], busy, delta=0.1 * busy, msg=(main, self.own))
        # the loop never sleeps (its source): its wait for the device is sync, not sleep
        self.assertLess(main["main_thread"]["sleep"], 0.02, main)
        self.assertEqual(main["leading"], "waiting for the GPU (synchronising)")
        # blocked in synchronisation over its threshold with a GPU busy well under 80%: its
        # rule, as the analyzer's afterwards
        self.assertGreater(self.own["sync_share"], 0.2)
        self.assertLess(busy, 0.8)
        self.assertEqual(main["verdict"], "sync-bound")
        self.assertEqual(first_verdict(self.traces), "sync-bound")


    def test_stacks_gives_the_loops_native_frames(self):
        self.assertEqual(self.stacks.returncode, 0, self.stacks.stderr)
        out = self.stacks.stdout
        self.assertIn("no Python interpreter the profiler can read in this process", out)
        blocks = re.findall(r"^  thread (.+?) \(tid (\d+)\), stopped [\d.]+ ms, native frames:\n"
                            r"((?:      .*\n)*)", out, flags=re.M)
        main = [frames for _, tid, frames in blocks if int(tid) == self.pid]
        self.assertEqual(len(main), 1, out)
        # its loop is main() of the program, by its source
        self.assertRegex(main[0], r"      main\+0x[0-9a-f]+ \(prog_cuda_live\)\n", out)
        # the profiler's own threads are left alone
        self.assertFalse([name for name, _, _ in blocks if name.startswith("pi-")], out)


class Screen(unittest.TestCase):
    def test_the_screen_and_ctrl_c(self):
        if not shutil.which("tmux"):
            self.fail("tmux is needed to drive the screen (tools/setup installs it)")
        job, pid, _ = start([PYTHON, LOADER_JOB, "8"])
        session = f"pi-top-{os.getpid()}"
        try:
            subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "40",
                            f"{LAUNCHER} top {pid}; echo exited $?; sleep 30"], check=True)
            screen = screen_once(session, "mostly", 10)
            self.assertIn(f"profinject top {pid}: 3 processes under the profiler", screen)
            self.assertIn("steps/s", screen)
            self.assertIn(f"{pid}: input-bound now (", screen)
            self.assertIn("; its main thread is mostly input-bound", screen)
            subprocess.run(["tmux", "send-keys", "-t", session, "C-c"], check=True)
            screen = screen_once(session, "exited", 5)
            self.assertIn("exited 0", screen, "Ctrl-C ends it cleanly")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
            job.kill()
            job.wait()

    def test_a_process_not_profiled_is_refused(self):
        plain = subprocess.Popen(["sleep", "30"])
        try:
            result = subprocess.run([LAUNCHER, "top", "--once", str(plain.pid)],
                                    capture_output=True, text=True, timeout=30)
        finally:
            plain.kill()
            plain.wait()
        self.assertEqual(result.returncode, 2)
        self.assertIn("no process under the profiler answered", result.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
