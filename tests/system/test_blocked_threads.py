#!/usr/bin/env python3
"""What each thread was blocked in when a signal ended the job: a wait that
never ends leaves no record of its own, so the library keeps each thread's wait
while it blocks and writes it when the process dies (PI_REC_WAIT_IN_FLIGHT).

tests/programs/blocked_job.py blocks its main thread in a lock, a thread in a
sleep and one in a read of a pipe, says their thread ids, and is stopped by
SIGTERM. The truth is the program's own lines and thread ids and this test's
clock: every thread is listed with what it was in, since when, its line and
call; the stop finding says where the main thread was blocked. On every Python 3.8 to
3.13 found here, and in summary mode.

Run by ctest with the build's paths in the environment."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from profiled_job import pythons  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
SOURCE = os.environ["PI_SOURCE"]
PROGRAM = os.path.join(SOURCE, "tests", "programs", "blocked_job.py")
BLOCKED_S = 0.6  # how long the test lets the main thread block before it stops the job


def line_of(mark):
    with open(PROGRAM) as f:
        return next(n for n, text in enumerate(f, 1) if mark in text)


def stop_blocked_job(python, summary=False, blocked_s=BLOCKED_S):
    """The job run by @python, stopped once blocked: its ids, the report, the seconds
    from its word to the signal by this test's clock."""
    traces = tempfile.mkdtemp(prefix="pi-blocked-")
    env = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
    if summary:
        env["PROFINJECT_MODE"] = "summary"
    job = subprocess.Popen([python, PROGRAM], env=env, stdout=subprocess.PIPE, text=True)
    words = job.stdout.readline().split()
    said = time.monotonic()
    time.sleep(blocked_s)
    job.send_signal(signal.SIGTERM)
    signalled = time.monotonic() - said
    job.communicate(timeout=60)
    assert job.returncode == -signal.SIGTERM, job.returncode
    assert words[0] == "blocked", words
    ids = {"main": int(words[1]), "sleeper": int(words[2]), "reader": int(words[3])}
    out = os.path.join(traces, "report.json")
    subprocess.run([ANALYZE, traces, "--quiet", "--json", out], check=True,
                   capture_output=True)
    with open(out) as f:
        return ids, json.load(f), signalled


class BlockedThreads(unittest.TestCase):
    def check(self, minor, python, summary=False):
        ids, report, signalled = stop_blocked_job(python, summary)
        [process] = [p for p in report["processes"] if p["pid"] == ids["main"]]
        blocked = {b["tid"]: b for b in process["end"]["blocked"]}
        for name, tid in ids.items():
            self.assertIn(tid, blocked, (minor, name, process["end"]))
        main, sleeper, reader = (blocked[ids[n]] for n in ("main", "sleeper", "reader"))
        # blocked from just after its word to the signal: most of the test's wait (the job
        # may be run a little after its word on a loaded machine), and no longer than the
        # program's whole life
        self.assertGreaterEqual(main["for_ns"] / 1e9, BLOCKED_S * 0.5, main)
        self.assertLessEqual(main["for_ns"] / 1e9, signalled + 5, main)
        self.assertGreaterEqual(sleeper["for_ns"], main["for_ns"], (sleeper, main))
        self.assertTrue(main["in"].startswith("a semaphore (a Python lock or queue)"), main)
        self.assertTrue(reader["in"].startswith("read on a pipe"), reader)
        # before 3.11 time.sleep is a select()
        self.assertTrue(sleeper["in"].startswith("a sleep" if minor >= 11 else "select"), sleeper)
        for entry, mark, function in ((main, "# the main thread blocks here", "blocked_in_lock"),
                                      (sleeper, "# the sleeper blocks here", "sleeper"),
                                      (reader, "# the reader blocks here", "reader")):
            where = f"{PROGRAM}:{line_of(mark)} in {function}"
            self.assertEqual((entry["line"], entry["call"]), (where, function), (minor, entry))
            self.assertIn(f" at {where}", entry["in"])
        # the stop says where the main thread was, for how long
        [stop] = [f for f in report["verdict"] if f["kind"] == "stopped"]
        where = f"{PROGRAM}:{line_of('# the main thread blocks here')} in blocked_in_lock"
        self.assertIn("its main thread was blocked for ", stop["summary"])
        self.assertIn(f"in a semaphore (a Python lock or queue) at {where}", stop["summary"])
        self.assertEqual(stop["line"], where)
        return report

    def test_a_short_block_is_no_hang(self):
        _, report, _ = stop_blocked_job(sys.executable)
        self.assertEqual(report["verdict"][0]["kind"], "stopped", report["verdict"][0])
        self.assertNotIn("hang", [f["kind"] for f in report["verdict"]])

    def test_a_main_thread_blocked_for_seconds_is_a_hang_said_first(self):
        ids, report, signalled = stop_blocked_job(sys.executable, blocked_s=3.0)
        hang = report["verdict"][0]
        self.assertEqual(hang["kind"], "hang", hang)
        self.assertEqual(hang["pid"], ids["main"])
        where = f"{PROGRAM}:{line_of('# the main thread blocks here')} in blocked_in_lock"
        self.assertEqual(hang["line"], where)
        self.assertIn(f"the main thread of pid {ids['main']} (the training process) was blocked "
                      "for ", hang["summary"])
        self.assertIn(f"in a semaphore (a Python lock or queue) at {where}", hang["summary"])
        self.assertGreaterEqual(hang["evidence"]["waited_s"], 2.5)
        self.assertLessEqual(hang["evidence"]["waited_s"], signalled + 5)
        # the stop still says who stopped it, after the hang
        self.assertEqual(report["verdict"][1]["kind"], "stopped", report["verdict"][1])

    def test_every_python(self):
        versions = pythons()
        for minor, python in versions:
            with self.subTest(python=f"3.{minor}"):
                self.check(minor, python)
        print(f"Pythons: {', '.join(f'3.{m}' for m, _ in versions)}", file=sys.stderr)

    def test_summary_mode(self):
        self.check(sys.version_info[1], sys.executable, summary=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
