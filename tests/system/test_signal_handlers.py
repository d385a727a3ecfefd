#!/usr/bin/env python3
"""The job's own signal handling runs exactly as without the profiler.

tests/programs/signal_job.py sets up its handling, starts a helper through
Python's subprocess (whose vfork child resets every handler before its
exec, in memory it shares with the job), says "ready PID" and waits for a
line; we signal it, then send the line. The truth is the job's own account
(what its handler saw), its exit status, and the same job run without the
profiler, which must end the same way. Each case runs under the preload in
full and in summary mode, and in a process the profiler attached to after
the handler was installed.

Run by ctest with the build's paths in the environment."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
LAUNCHER = os.environ["PI_LAUNCHER"]
SOURCE = os.environ["PI_SOURCE"]
PROGRAM = os.path.join(SOURCE, "tests", "programs", "signal_job.py")
MODES = {"full": {}, "summary": {"PROFINJECT_MODE": "summary"}}


def run(mode, sig, profiled=True, extra_env=None):
    """signal_job.py @mode, signalled with @sig once ready: (return code, stdout, stderr,
    traces)."""
    env = dict(os.environ)
    traces = tempfile.mkdtemp()
    if profiled:
        env.update(LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces, **(extra_env or {}))
    job = subprocess.Popen([sys.executable, PROGRAM, mode], env=env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = job.stdout.readline()
        target = int(ready.split()[1])
        os.kill(target, sig)
        try:
            job.stdin.write("go\n")
            job.stdin.flush()
        except BrokenPipeError:
            pass  # it ended on the signal
        out, err = job.communicate(timeout=60)
    finally:
        job.kill()
    return job.returncode, ready + out, err, traces


def verdict(traces):
    out = os.path.join(tempfile.mkdtemp(), "report.json")
    result = subprocess.run([ANALYZE, traces, "--json", out], capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"analyzer failed ({result.returncode}): {result.stderr}")
    with open(out) as f:
        return json.load(f)["verdict"]


class OwnHandlers(unittest.TestCase):
    def same_as_unprofiled(self, mode, sig):
        """The job ends the same with and without the profiler; its profiled runs."""
        alone = run(mode, sig, profiled=False)
        runs = {}
        for name, env in MODES.items():
            with self.subTest(mode=name):
                runs[name] = run(mode, sig, extra_env=env)
                self.assertEqual(runs[name][0], alone[0], runs[name][2][-600:])
                self.assertEqual(runs[name][1].split()[2:], alone[1].split()[2:], runs[name][2])
        return alone, runs

    def test_a_python_handler_installed_after_the_profiler_runs(self):
        alone, runs = self.same_as_unprofiled("handler", signal.SIGTERM)
        self.assertEqual(alone[0], 0)
        for code, out, _, _ in runs.values():
            self.assertIn(f"handled {signal.SIGTERM.value}", out)

    def test_an_ignored_signal_stays_ignored(self):
        alone, runs = self.same_as_unprofiled("ignored", signal.SIGTERM)
        for code, out, _, traces in runs.values():
            self.assertEqual(code, 0)
            self.assertIn("survived", out)
            # an ignored signal stops nothing
            self.assertNotIn("stopped", [f["kind"] for f in verdict(traces)])

    def test_ctrl_c_raises_keyboard_interrupt(self):
        alone, runs = self.same_as_unprofiled("sigint", signal.SIGINT)
        self.assertEqual(alone[0], -signal.SIGINT)
        for code, _, err, traces in runs.values():
            self.assertIn("KeyboardInterrupt", err)
            # stopped by this process's SIGINT, which Python's handler took: no death
            findings = verdict(traces)
            self.assertEqual(findings[0]["kind"], "stopped", findings[0])
            self.assertNotIn("died", [f["kind"] for f in findings])
            self.assertEqual(findings[0]["evidence"]["signal"], signal.SIGINT)
            self.assertEqual(findings[0]["evidence"]["sender_pid"], os.getpid())
            self.assertEqual(findings[0]["evidence"]["handled"], 1)

    def test_a_forked_worker_s_own_handler_runs(self):
        alone, runs = self.same_as_unprofiled("worker", signal.SIGTERM)
        for code, out, _, _ in runs.values():
            self.assertIn(f"worker handled {signal.SIGTERM.value}", out)
            self.assertIn("worker status 0", out)

    def test_a_c_program_s_sigaction_handler_runs(self):
        """SA_SIGINFO, after a vfork child reset SIGTERM before its exec: the handler runs
        and sees the signal's own sender, as without the profiler."""
        program = os.path.join(os.environ["PI_PROGRAMS"], "prog_own_handler")
        alone = subprocess.run([program], capture_output=True, text=True, timeout=60)
        self.assertEqual(alone.returncode, 0, alone.stdout)
        for name, env in MODES.items():
            with self.subTest(mode=name):
                ran = subprocess.run([program], capture_output=True, text=True, timeout=60,
                                     env=dict(os.environ, LD_PRELOAD=PRELOAD,
                                              PROFINJECT_OUTPUT=tempfile.mkdtemp(), **env))
                self.assertEqual(ran.returncode, 0, ran.stdout + ran.stderr)
                said = ran.stdout.split()
                self.assertEqual(said[1], str(signal.SIGTERM.value))
                self.assertEqual(said[3], said[5].rstrip(")"), "its own pid sent it")

    def test_a_handler_installed_before_an_attach_runs(self):
        """The handler exists before the profiler's own: attach puts ours in front of it."""
        job = subprocess.Popen([sys.executable, PROGRAM, "before"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            pid = int(job.stdout.readline().split()[1])
            attach = subprocess.Popen([LAUNCHER, "attach", str(pid), "-o", tempfile.mkdtemp(),
                                       "--duration", "2s"], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
            said = attach.stdout.readline()
            self.assertIn(f"attached to {pid}", said, attach.stderr.read() if not said else "")
            # while attached, our handler in front of the job's; then after the detach
            handled = []
            for moment in ("attached", "detached"):
                if moment == "detached":
                    self.assertEqual(attach.wait(timeout=60), 0, attach.stderr.read())
                os.kill(pid, signal.SIGTERM)
                job.stdin.write("go\n")
                job.stdin.flush()
                handled.append(job.stdout.readline().split())
            out, err = job.communicate(timeout=60)
        finally:
            job.kill()
        self.assertEqual(job.returncode, 0, err)
        self.assertEqual(handled, [["handled", "15"], ["handled", "15", "15"]], err)


if __name__ == "__main__":
    unittest.main()
