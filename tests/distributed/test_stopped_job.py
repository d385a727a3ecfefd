#!/usr/bin/env python3
"""A torchrun job stopped from outside ends as it would without the profiler.

Three gloo ranks (tests/distributed/hung_rank.py), one of them stuck in its
own code while the others wait in all_reduce, stopped by SIGTERM: to
`profinject run`, which passes it on, to torchrun itself under the preload,
and to `profinject run --summary`. Without the profiler torchrun's agent
catches SIGTERM ("got signal: 15"), stops its ranks and exits; under it the
same must happen: the agent's own message in its stderr, no rank left
running. The truth is each rank's own account (its pid, where it stopped)
and /proc. The report then says the job was stopped, by whom, after how
many steps, and not that it died.

Run by ctest with the build's paths in the environment."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
LAUNCHER = os.environ["PI_LAUNCHER"]
WORKLOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hung_rank.py")
TORCHRUN = os.path.join(os.path.dirname(sys.executable), "torchrun")
RANKS = 3
HUNG_RANK = 2
HANG_STEP = 10


def line_of(mark):
    """the line of the workload that holds @mark"""
    with open(WORKLOAD) as f:
        return next(n for n, text in enumerate(f, 1) if mark in text)


def alive(pid):
    """whether @pid runs (a zombie has ended)"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop_job(how):
    """The job started @how ("launcher", "preload", "summary"), stopped by SIGTERM once every
    rank is where it stays: (return code, stderr, traces, truth per rank, signalled pid)."""
    top = tempfile.mkdtemp(prefix="profinject-stop-")
    traces, truth = os.path.join(top, "traces"), os.path.join(top, "truth")
    os.makedirs(truth)
    job = [TORCHRUN, "--standalone", f"--nproc_per_node={RANKS}", WORKLOAD,
           f"--hung-rank={HUNG_RANK}", f"--hang-step={HANG_STEP}", f"--truth={truth}"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if how == "preload":
        env.update(LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
    else:
        job = [LAUNCHER, "run", *(["--summary"] if how == "summary" else []), "-o", traces,
               "--", *job]
    # a file, not a pipe: ranks left running would hold a pipe open after the job ended
    stderr = open(os.path.join(top, "stderr"), "w+")
    started = subprocess.Popen(job, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    ranks = {}
    try:
        deadline = time.monotonic() + 240
        while len([n for n in os.listdir(truth) if n.endswith(".where")]) < RANKS:
            if started.poll() is not None or time.monotonic() > deadline:
                stderr.seek(0)
                raise AssertionError(f"the job did not get going: {stderr.read()[-2000:]}")
            time.sleep(0.2)
        time.sleep(1.0)  # the others in all_reduce, the hung one in stuck()
        # where every process is, live, before the stop
        stacks = subprocess.run([LAUNCHER, "stacks", "--all", str(started.pid)],
                                capture_output=True, text=True, timeout=60)
        started.send_signal(signal.SIGTERM)
        started.wait(timeout=120)
    finally:
        started.kill()
    stderr.seek(0)
    err = stderr.read()
    for rank in range(RANKS):
        with open(os.path.join(truth, f"rank{rank}.pid")) as f:
            pid = int(f.read())
        with open(os.path.join(truth, f"rank{rank}.where")) as f:
            step, where = f.read().split()
        ranks[rank] = {"pid": pid, "step": int(step), "where": where}
    return started.returncode, err, traces, ranks, started.pid, stacks


class StoppedTorchrun(unittest.TestCase):
    def check_stopped_as_without_the_profiler(self, how):
        code, err, traces, ranks, signalled, stacks = stop_job(how)
        self.check_stacks_group_the_ranks(stacks, ranks)
        # torchrun's agent caught it: its own handler ran and said so
        self.assertIn("got signal: 15", err, err[-3000:])
        self.assertNotEqual(code, 0)
        # it stopped its ranks before it ended: none outlives the job
        time.sleep(0.5)
        left = [r["pid"] for r in ranks.values() if alive(r["pid"])]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        self.assertEqual(left, [], f"ranks left running after the job ended ({how})")
        self.assertEqual(ranks[HUNG_RANK]["where"], "stuck")
        return traces, ranks, signalled

    def check_stacks_group_the_ranks(self, stacks, ranks):
        """`stacks --all` on the hung job: the hung rank alone at its line, the waiting ranks
        together in all_reduce, blocked, above them the fewer first."""
        self.assertEqual(stacks.returncode, 0, stacks.stderr)
        groups = stacks.stdout[stacks.stdout.index("main threads by where they are"):]
        lines = groups.splitlines()[1:]
        hung = ranks[HUNG_RANK]["pid"]
        waiting = sorted(truth["pid"] for r, truth in ranks.items() if r != HUNG_RANK)
        [alone] = [n for n, line in enumerate(lines) if f"1 process, pid {hung}:" in line]
        self.assertIn(f"{WORKLOAD}:{line_of('# stuck here')} in stuck", lines[alone])
        [together] = [n for n, line in enumerate(lines)
                      if f"2 processes, pids {waiting[0]}, {waiting[1]}:" in line or
                      f"2 processes, pids {waiting[1]}, {waiting[0]}:" in line]
        self.assertRegex(lines[together], r"distributed_c10d\.py:\d+ in all_reduce, blocked for "
                         r"[\d.]+ s or more in a condition wait$")
        self.assertLess(alone, together, groups)

    def check_report_says_hung_then_stopped(self, traces, ranks, sender, sender_command):
        """The hang first: the hung rank by its line, the others by the call and line they
        waited at, against each rank's own account of where it went. Then one finding:
        stopped by SIGTERM from @sender (whose command line holds @sender_command), the
        agent's handler took it, the ranks with it; no death."""
        out = os.path.join(tempfile.mkdtemp(), "report.json")
        result = subprocess.run([ANALYZE, traces, "--json", out], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as f:
            report = json.load(f)
        verdict = report["verdict"]
        hang = verdict[0]
        self.assertEqual(hang["kind"], "hang", hang)
        stuck_line = line_of("# stuck here")
        wait_line = line_of("# the others wait here")
        waiting = sorted(r for r, truth in ranks.items() if truth["where"] == "all_reduce")
        self.assertEqual(hang["evidence"]["missing_ranks"], 1)
        self.assertEqual(hang["evidence"]["first_missing_rank"], HUNG_RANK)
        self.assertEqual(hang["evidence"]["waiting_ranks"], len(waiting))
        self.assertEqual(hang["line"], f"{WORKLOAD}:{wait_line} in main")
        self.assertTrue(hang["summary"].startswith(f"rank {HUNG_RANK} never came to the call "
                                                   f"where ranks {waiting[0]} and {waiting[1]} "
                                                   f"(of {RANKS}) waited"), hang["summary"])
        self.assertIn(f"in all_reduce (torch/distributed/distributed_c10d.py:", hang["summary"])
        # in its sleep, all but a few microseconds of each turn of its loop; else running there
        self.assertRegex(hang["summary"], rf"Rank {HUNG_RANK} \(pid {ranks[HUNG_RANK]['pid']}\) "
                         rf"was (in a sleep at {re.escape(WORKLOAD)}:{stuck_line}|running, last "
                         rf"seen at {re.escape(WORKLOAD)}:\d+) in stuck")
        # each rank's main thread as it was blocked: the waiting ones since their own account
        # of reaching the collective (the job then ran a second more before the stop)
        by_pid = {p["pid"]: p for p in report["processes"]}
        for rank, truth in ranks.items():
            main = [b for b in by_pid[truth["pid"]]["end"]["blocked"] if b["tid"] == truth["pid"]]
            if rank == HUNG_RANK and not main:
                continue  # between two sleeps
            [main] = main
            if rank == HUNG_RANK:
                self.assertEqual((main["call"], main["line"]),
                                 ("stuck", f"{WORKLOAD}:{stuck_line} in stuck"), main)
            else:
                self.assertEqual((main["call"], main["line"]),
                                 ("all_reduce", f"{WORKLOAD}:{wait_line} in main"), main)
                self.assertGreaterEqual(main["for_ns"], 1.0e9, main)
        self.check_stopped(verdict[1:], ranks, sender, sender_command)

    def check_stopped(self, verdict, ranks, sender, sender_command):
        first = verdict[0]
        self.assertEqual(first["kind"], "stopped", first)
        self.assertNotIn("died", [f["kind"] for f in verdict], verdict)
        evidence = first["evidence"]
        self.assertEqual(evidence["signal"], signal.SIGTERM)
        self.assertEqual(evidence["sender_pid"], sender)
        # the sender is no process of the job: named as it was when it sent the signal
        self.assertIn(f"sent by pid {sender} (uid {os.getuid()}, ", first["summary"])
        self.assertIn(sender_command, first["summary"])
        self.assertEqual(evidence["handled"], 1, "torchrun's agent took it")
        self.assertEqual(evidence["processes_stopped"], 1 + RANKS)
        for rank in ranks.values():
            self.assertIn(f"pid {rank['pid']} (rank ", first["summary"])
        # where the hung rank was: its own line in stuck()
        self.assertIn(f"{WORKLOAD}:{line_of('# stuck here')} in stuck", first["summary"])

    def test_sigterm_to_the_launcher(self):
        traces, ranks, launcher = self.check_stopped_as_without_the_profiler("launcher")
        self.check_report_says_hung_then_stopped(traces, ranks, launcher, "profinject run -o ")  # it passed it on

    def test_sigterm_to_torchrun_under_the_preload(self):
        traces, ranks, _ = self.check_stopped_as_without_the_profiler("preload")
        self.check_report_says_hung_then_stopped(traces, ranks, os.getpid(), os.path.basename(__file__))

    def test_sigterm_to_the_launcher_in_summary_mode(self):
        traces, ranks, launcher = self.check_stopped_as_without_the_profiler("summary")
        self.check_report_says_hung_then_stopped(traces, ranks, launcher, "profinject run --summary -o ")


if __name__ == "__main__":
    unittest.main()
