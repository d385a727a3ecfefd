#!/usr/bin/env python3
"""`profinject stacks PID`: every Python thread's stack in a running job,
against the lines the job's threads are known to sit on
(tests/programs/stacks_job.py); the native frames of its thread that runs
no Python, against the call the kernel says it is in; --all for its
DataLoader worker; the pauses it states against the job's own main loop,
which cannot turn while the profiler holds the interpreter's lock, nor
while its thread is stopped for its native frames (--native); a clear
refusal for a process that is not profiled, one without Python, and
another user."""
import json
import os
import re
import signal
import subprocess
import tempfile
import sys
import time
import unittest

LAUNCHER = os.environ["PI_LAUNCHER"]
LIBRARY = os.environ["PI_LIBRARY"]
PYTHON = os.environ.get("PI_PYTHON", sys.executable)
JOB = os.path.join(os.environ["PI_SOURCE"], "tests", "programs", "stacks_job.py")


def line_of(marker):
    with open(JOB) as f:
        return next(n for n, line in enumerate(f, 1) if marker in line)


def frame(marker, function):
    return f"{JOB}:{line_of(marker)} in {function}"


def thread_comm(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/comm") as f:
        return f.read().strip()


def system_call(pid, tid):
    """The system call thread @tid is blocked in, by the kernel's account."""
    with open(f"/proc/{pid}/task/{tid}/syscall") as f:
        return int(f.read().split()[0])


SYS_PAUSE, SYS_CLOCK_NANOSLEEP = 34, 230  # x86-64


def native_threads(answer):
    """{tid: (name, stopped ms, frames innermost first)} of @answer's native frames"""
    return {int(tid): (name, float(ms), [line.strip() for line in frames.splitlines()])
            for name, tid, ms, frames in re.findall(
                r"^  thread (.+?) \(tid (\d+)\), stopped ([\d.]+) ms, native frames:\n"
                r"((?:      .*\n)*)", answer + "\n", flags=re.M)}


class Stacks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.traces = subprocess.check_output(["mktemp", "-d"], text=True).strip()
        cls.started = time.monotonic()
        cls.job = subprocess.Popen([PYTHON, JOB], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True, env=dict(os.environ, LD_PRELOAD=LIBRARY,
                                                       PROFINJECT_OUTPUT=cls.traces))
        words = cls.job.stdout.readline().split()
        assert words and words[0] == "ready", words
        cls.pid = int(words[1])
        cls.spans = []
        cls.one = cls.stacks(cls.pid)
        cls.all = cls.stacks("--all", cls.pid)
        cls.native = cls.stacks("--native", cls.pid)
        cls.native_tid = next(int(t) for t in os.listdir(f"/proc/{cls.pid}/task")
                              if thread_comm(cls.pid, t) == "native-pause")
        cls.native_call_after = system_call(cls.pid, cls.native_tid)
        cls.other = cls.as_nobody()
        # a stopped process answers nothing: said, and it runs on once continued
        os.kill(cls.pid, signal.SIGSTOP)
        try:
            cls.stopped = subprocess.run([LAUNCHER, "stacks", "--timeout", "1s", str(cls.pid)],
                                         capture_output=True, text=True, timeout=30)
        finally:
            os.kill(cls.pid, signal.SIGCONT)
        cls.job.stdin.close()
        cls.account = json.loads(cls.job.stdout.readline())
        cls.job.wait(timeout=30)

    @classmethod
    def stacks(cls, *arguments):
        start = time.monotonic_ns()
        result = subprocess.run([LAUNCHER, "stacks", *map(str, arguments)], capture_output=True,
                                text=True, timeout=60)
        end = time.monotonic_ns()
        cls.job.stdin.write(f"span {start} {end}\n")
        cls.job.stdin.flush()
        return result

    @classmethod
    def as_nobody(cls):
        if os.geteuid() != 0:
            return None
        return subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                               LAUNCHER, "stacks", str(cls.pid)], capture_output=True, text=True,
                              timeout=30)

    def section(self, text, pid):
        """The answer of process @pid in @text."""
        parts = re.split(r"^(\d+):\n", text, flags=re.M)
        answers = dict(zip(parts[1::2], parts[2::2]))
        self.assertIn(str(pid), answers, text)
        return answers[str(pid)]

    def threads(self, answer):
        """{thread name: its frames, innermost first}"""
        found = {}
        for block in re.split(r"^  thread ", answer, flags=re.M)[1:]:
            lines = block.splitlines()
            name = lines[0].split(" (tid")[0]
            found[name] = [line.strip() for line in lines[1:] if line.startswith("      ")]
        return found

    def test_each_thread_on_its_line(self):
        self.assertEqual(self.one.returncode, 0, self.one.stderr)
        answer = self.section(self.one.stdout, self.pid)
        threads = self.threads(answer)
        self.assertEqual(list(threads)[0], "MainThread", answer)
        self.assertIn(f"MainThread (tid {self.pid})", answer)
        # the main thread is somewhere in its loop's lines
        innermost = re.fullmatch(re.escape(JOB) + r":(\d+) in progress", threads["MainThread"][0])
        self.assertIsNotNone(innermost, threads["MainThread"])
        self.assertIn(int(innermost.group(1)),
                      range(line_of("# the main thread counts"), line_of("# the loop ends here") + 1))
        self.assertEqual(threads["waiter"][0], frame("# blocked here", "waiter"))
        self.assertEqual(threads["sleeper"][0], frame("# asleep here", "sleeper"))
        # what each blocked thread is in, while it is, for how long: the waiter since before
        # the job said it was ready, the sleeper in one of its 50 ms sleeps, or just after one
        # waiting for the interpreter's lock (the main thread's loop holds it)
        waiter = re.search(r"^  thread waiter \(tid \d+\):\n(?:      .*\n)+    blocked for "
                           r"([\d.]+) s in a semaphore \(a Python lock or queue\)$", answer, re.M)
        self.assertIsNotNone(waiter, answer)
        self.assertGreater(float(waiter.group(1)), 0)
        self.assertLess(float(waiter.group(1)), time.monotonic() - self.started + 1)
        sleeper = re.search(r"^  thread sleeper \(tid \d+\):\n(?:      .*\n)+    blocked for "
                            r"([\d.]+) s in (a sleep|a condition wait)$", answer, re.M)
        self.assertIsNotNone(sleeper, answer)
        self.assertLess(float(sleeper.group(1)), 1.0)
        # the library's frames named as the reports name them
        self.assertIn("threading.py:", threads["waiter"][1])
        # and the threads that run no Python, the profiler's own said so
        self.assertRegex(answer, r"threads without Python frames: .*pi-writer \(tid \d+, the profiler's\)")

    def test_the_pause_it_states_the_job_saw(self):
        held = float(re.search(r"held ([\d.]+) ms", self.one.stdout).group(1))
        span = self.account["spans"][0]
        self.assertGreater(span["turns"], 100, "the job's loop turned around the request")
        # while the lock is held the loop cannot turn: its longest gap is at least that
        self.assertGreaterEqual(span["max_gap_ns"] / 1e6, held, (held, span))

    def test_a_thread_without_python_gets_its_native_frames(self):
        answer = self.section(self.one.stdout, self.pid)
        native = native_threads(answer)
        # only the thread that runs no Python: not the Python threads, not the profiler's
        self.assertEqual(list(native), [self.native_tid], answer)
        name, _, frames = native[self.native_tid]
        self.assertEqual(name, "native-pause")
        # in the call the kernel says it waits in, started by the C library's thread start
        self.assertEqual(self.native_call_after, SYS_PAUSE)
        self.assertRegex(frames[0], r"^pause\+0x[0-9a-f]+ \(libc\.so\.6\)$", answer)
        self.assertTrue(any(f.startswith("start_thread+") for f in frames), frames)

    def test_native_frames_stop_each_thread_no_longer_than_the_job_saw(self):
        self.assertEqual(self.native.returncode, 0, self.native.stderr)
        native = native_threads(self.section(self.native.stdout, self.pid))
        # --native: the Python threads too, the main thread among them
        self.assertIn(self.pid, native, self.native.stdout)
        self.assertIn(self.native_tid, native)
        stopped_ms = native[self.pid][1]
        span = self.account["spans"][2]
        self.assertGreater(span["turns"], 100, "the job's loop turned around the request")
        # the main loop cannot turn while its thread is stopped
        self.assertGreaterEqual(span["max_gap_ns"] / 1e6, stopped_ms, (stopped_ms, span))
        # and the thread that was stopped in pause() waits in it still
        self.assertEqual(self.native_call_after, SYS_PAUSE)

    def test_all_takes_in_the_worker(self):
        self.assertEqual(self.all.returncode, 0, self.all.stderr)
        sections = re.findall(r"^(\d+):\n", self.all.stdout, flags=re.M)
        self.assertIn(str(self.pid), sections)
        workers = [int(p) for p in sections if int(p) != self.pid]
        self.assertEqual(len(workers), 1, self.all.stdout)
        threads = self.threads(self.section(self.all.stdout, workers[0]))
        self.assertEqual(threads["MainThread"][0], frame("# the worker sleeps", "Files.__getitem__"))

    def test_a_stopped_process_is_said_and_runs_on(self):
        self.assertEqual(self.stopped.returncode, 2, self.stopped.stdout)
        self.assertIn(f"{self.pid}: no answer within 1000 ms", self.stopped.stderr)
        # continued, the job went on to the end of its loop and printed its account
        self.assertEqual(len(self.account["spans"]), 3, self.account)

    def test_a_process_attached_to_gives_its_stacks(self):
        job = subprocess.Popen([PYTHON, JOB], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, start_new_session=True)
        try:
            self.assertEqual(job.stdout.readline().split()[0], "ready")
            attached = subprocess.run([LAUNCHER, "attach", str(job.pid), "-o", tempfile.mkdtemp()],
                                      capture_output=True, text=True, timeout=60)
            self.assertEqual(attached.returncode, 0, attached.stderr)
            result = subprocess.run([LAUNCHER, "stacks", str(job.pid)], capture_output=True,
                                    text=True, timeout=60)
            subprocess.run([LAUNCHER, "ctl", str(job.pid), "detach"], capture_output=True,
                           timeout=60)
        finally:
            os.killpg(job.pid, signal.SIGKILL)  # its DataLoader worker too
            job.wait()
        self.assertEqual(result.returncode, 0, result.stderr)
        threads = self.threads(self.section(result.stdout, job.pid))
        self.assertEqual(threads["waiter"][0], frame("# blocked here", "waiter"))

    def test_a_process_not_profiled_is_refused_with_the_way(self):
        plain = subprocess.Popen(["sleep", "30"])
        try:
            result = subprocess.run([LAUNCHER, "stacks", str(plain.pid)], capture_output=True,
                                    text=True, timeout=30)
        finally:
            plain.kill()
            plain.wait()
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"profinject attach {plain.pid}", result.stderr)

    def test_a_process_without_python_says_so(self):
        traces = subprocess.check_output(["mktemp", "-d"], text=True).strip()
        native = subprocess.Popen(["sleep", "30"], env=dict(os.environ, LD_PRELOAD=LIBRARY,
                                                            PROFINJECT_OUTPUT=traces))
        try:
            time.sleep(0.5)  # its control socket is made at its first flush
            system_call_seen = system_call(native.pid, native.pid)
            result = subprocess.run([LAUNCHER, "stacks", str(native.pid)], capture_output=True,
                                    text=True, timeout=30)
        finally:
            native.kill()
            native.wait()
        self.assertIn("no Python interpreter the profiler can read in this process",
                      result.stdout)
        # its one thread's native frames, in the call the kernel says it sleeps in
        self.assertEqual(system_call_seen, SYS_CLOCK_NANOSLEEP)
        frames = native_threads(self.section(result.stdout, native.pid))[native.pid][2]
        self.assertRegex(frames[0], r"^clock_nanosleep\+0x[0-9a-f]+ \(libc\.so\.6\)$")
        self.assertTrue(any(f.endswith(" (sleep)") for f in frames), frames)

    def test_another_user_is_refused(self):
        if self.other is None:
            self.fail("needs root to act as another user (nobody)")
        result = self.other
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertIn("no process under the profiler answered", result.stderr)
        self.assertNotIn("thread MainThread", result.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
