#!/usr/bin/env python3
"""The profinject launcher: run passes the command's status through,
capture windows open and close in a running process (also across a PID
namespace), another user cannot touch them, and --duration stops
recording on time. Checked against what the traces contain."""
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

LAUNCHER = os.environ["PI_LAUNCHER"]
ANALYZE = os.environ["PI_ANALYZE"]
PROGRAMS = os.environ["PI_PROGRAMS"]
MiB = 1 << 20
LOOP = os.path.join(PROGRAMS, "prog_loop")


def ctl(pid, *command, user=None):
    argv = [LAUNCHER, "ctl", str(pid), *command]
    if user:
        argv = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True)


def dumps(traces):
    """The dump of every trace file in @traces."""
    return [subprocess.run([ANALYZE, "dump", os.path.join(traces, name)], capture_output=True,
                           text=True).stdout for name in os.listdir(traces)]


def timeline(traces):
    """(kind, seconds) of capture records and marks, in time order."""
    events = []
    for text in dumps(traces):
        for time_text, kind, rest in re.findall(r"^\d+ ([+-][\d.]+) tid=\d+ (capture|mark)(.*)$",
                                                text, re.M):
            value = int(re.search(r"value=(\d+)", rest).group(1)) if kind == "mark" else None
            opened = kind == "capture" and " args=1," in rest
            events.append((float(time_text), kind, opened if kind == "capture" else value))
    return sorted(events)


def by_window(events):
    """Of timeline @events: the windows opened, the values of the marks inside
    one, and how many marks fell outside every window."""
    windows, inside, outside, opened = 0, [], 0, False
    for _, kind, what in events:
        if kind == "capture":
            opened = what
            windows += what
        elif opened:
            inside.append(what)
        else:
            outside += 1
    return windows, inside, outside


def json_report(traces):
    """The analyzer's JSON report of @traces."""
    path = os.path.join(tempfile.mkdtemp(), "r.json")
    subprocess.run([ANALYZE, traces, "--quiet", "--json", path], check=True, capture_output=True)
    with open(path) as f:
        return json.load(f)


def run_paused(program, *args):
    """@program from PROGRAMS run to its end under `run --paused`: (traces, its output)."""
    out = tempfile.mkdtemp()
    run = subprocess.run([LAUNCHER, "run", "--paused", "-o", out, "--",
                          os.path.join(PROGRAMS, program), *args],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        raise AssertionError(f"{program} exited with {run.returncode}: {run.stderr}")
    return out, run.stdout


def children_of(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return f.read().split()


def pi_library_mapped(pid):
    with open(f"/proc/{pid}/maps") as f:
        return "/libprofinject.so" in f.read()


def thread_names(pid):
    names = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass  # a thread that ended meanwhile
    return names


def wait_for_loop(launcher_pid):
    """prog_loop's pid once it has started under the launcher: once the launcher's child
    runs prog_loop, not while it is the launcher's fork still to exec it."""
    for _ in range(200):
        children = children_of(launcher_pid)
        try:
            if children and os.readlink(f"/proc/{children[0]}/exe") == os.path.realpath(LOOP):
                return int(children[0])
        except OSError:
            pass
        time.sleep(0.01)
    raise AssertionError("prog_loop did not start")


@contextlib.contextmanager
def paused_loop(out):
    """prog_loop started paused under the launcher, traces in @out: its pid,
    once its control socket is up; ended when the block is left"""
    launcher = subprocess.Popen([LAUNCHER, "run", "--paused", "-o", out, "--", LOOP],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        loop = wait_for_loop(launcher.pid)
        time.sleep(0.2)
        yield loop
    finally:
        launcher.send_signal(signal.SIGTERM)
        launcher.wait(timeout=10)


class Run(unittest.TestCase):
    def test_termination_is_passed_to_the_command(self):
        out = tempfile.mkdtemp()
        launcher = subprocess.Popen([LAUNCHER, "run", "-o", out, "--", LOOP],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loop = wait_for_loop(launcher.pid)
        time.sleep(0.1)
        launcher.send_signal(signal.SIGTERM)
        self.assertEqual(launcher.wait(timeout=10), 128 + signal.SIGTERM)
        self.assertFalse(os.path.exists(f"/proc/{loop}"), "the command ended with the launcher")

    def test_status_passes_through_and_traces_are_announced(self):
        out = tempfile.mkdtemp()
        result = subprocess.run([LAUNCHER, "run", "-o", out, "--",
                                 os.path.join(PROGRAMS, "prog_status"), "5", "100"],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 5)
        self.assertEqual(result.stdout, "ok\n")
        self.assertIn(f"profinject: traces in {out}", result.stderr)
        self.assertIn(f"profinject analyze {out}", result.stderr)
        self.assertEqual(len([f for f in os.listdir(out) if f.endswith(".pitrace.zst")]), 1)

    def test_wrong_settings_are_told_once_for_the_tree(self):
        # a typo in a name, a value not among the choices, a number that is not one:
        # each said once, by the first process (sh), not by the two it starts; the job id
        # docs/distributed.md tells users to set is no typo
        run = subprocess.run([LAUNCHER, "run", "-o", tempfile.mkdtemp(), "--", "sh", "-c",
                              "/bin/true; /bin/true"], capture_output=True, text=True,
                             env=dict(os.environ, PROFINJECT_GPU_TIMNG="events",
                                      PROFINJECT_GPU_TIMING="event", PROFINJECT_PY_TIME_MS="fast",
                                      PROFINJECT_JOB_ID="run42"))
        self.assertEqual(run.returncode, 0)
        told = sorted(line for line in run.stderr.splitlines()
                      if not line.startswith(("profinject: traces in", "profinject: analyse",
                                              "profinject: no trace in")))
        self.assertEqual(told, [
            "profinject: PROFINJECT_GPU_TIMING=event is not one of auto|events|off; using auto",
            "profinject: PROFINJECT_GPU_TIMNG is not a setting of profinject (a typo?); it is "
            "ignored",
            "profinject: PROFINJECT_PY_TIME_MS=fast is not a number from 0 to 60000; using 10"])

    def test_numeric_options_reject_garbage(self):
        for argv in ([ANALYZE, "--warmup", "3x", "/nonexistent"],
                     [ANALYZE, "compare", "a", "b", "--min-count", "-1"]):
            with self.subTest(argv=argv[1:3]):
                run = subprocess.run(argv, capture_output=True, text=True)
                self.assertEqual(run.returncode, 1)
                self.assertIn("takes a whole number from 0 to", run.stderr)

    def test_help_everywhere(self):
        for command in ([], ["run"], ["ctl"], ["analyze"]):
            result = subprocess.run([LAUNCHER, *command, "--help"], capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, command)
            self.assertIn("usage", result.stdout.lower())

    def test_analyze_forwards(self):
        out = tempfile.mkdtemp()
        subprocess.run([LAUNCHER, "run", "-o", out, "--", os.path.join(PROGRAMS, "prog_status"),
                        "0", "10"], capture_output=True, check=True)
        result = subprocess.run([LAUNCHER, "analyze", "info", out], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0)
        self.assertIn("trace files: 1", result.stdout)


def status_run(argv, out, cwd=None, env=None, executable=None, extra=()):
    """@argv (the launcher) run -o @out of prog_status, which records: its result."""
    return subprocess.run([*argv, "run", *extra, "-o", out, "--",
                           os.path.join(PROGRAMS, "prog_status"), "0", "100"],
                          capture_output=True, text=True, cwd=cwd, env=env, executable=executable,
                          timeout=60)


def hint_of(stderr):
    """The command the launcher says to analyse the traces with."""
    [hint] = [line for line in stderr.splitlines() if line.startswith("profinject: analyse")]
    return hint.split(": ", 2)[2]


def trace_count(out):
    return len([f for f in os.listdir(out) if f.endswith(".pitrace.zst")])


class Hints(unittest.TestCase):
    """What the launcher tells the analyst to paste does what it says, and shows
    nothing a terminal would act on."""

    def test_the_hint_pasted_into_sh_runs_nothing_and_names_the_directory(self):
        for name in ("$(touch PWNED)'x`touch PWNED`", "\x1b]0;title\x07red\x1b[31m $HOME\n"):
            with self.subTest(name=name):
                work = tempfile.mkdtemp()
                out = os.path.join(work, name)
                run = status_run([LAUNCHER], out, cwd=work)
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertEqual(trace_count(out), 1)
                # no control character but the ends of lines reaches the terminal
                self.assertEqual(re.findall(r"[\x00-\x09\x0b-\x1f\x7f]", run.stderr), [])
                hint = hint_of(run.stderr)
                # the shell's own reading of the words: the launcher, analyze, the directory
                words = subprocess.run(["sh", "-c", f"set -- {hint}; printf '%s\\0' \"$@\""],
                                       cwd=work, capture_output=True, text=True).stdout
                launcher, command, directory = words.split("\0")[:3]
                self.assertTrue(os.path.samefile(launcher, LAUNCHER))
                self.assertEqual(command, "analyze")
                self.assertTrue(os.path.samefile(directory, out), repr(directory))
                self.assertEqual(directory.rstrip("/"), out)
                if "\x1b" not in name:
                    self.assertEqual(shlex.split(hint), [LAUNCHER, "analyze", out])
                # pasted for real: it analyses that directory and creates nothing
                pasted = subprocess.run(["sh", "-c", hint], cwd=work, capture_output=True,
                                        text=True, timeout=120)
                self.assertEqual(pasted.returncode, 0, pasted.stderr)
                self.assertIn("profinject report: 1 processes", pasted.stdout)
                self.assertEqual(sorted(os.listdir(work)), [name])

    def test_the_hint_names_the_launcher_by_a_path_that_works(self):
        build = os.path.dirname(os.path.dirname(LAUNCHER))
        relative = os.path.relpath(LAUNCHER, build)
        elsewhere = dict(os.environ, PATH="/usr/bin:/bin")
        on_path = dict(os.environ, PATH=os.path.dirname(LAUNCHER) + ":/usr/bin:/bin")
        for argv, env, named in (([relative], elsewhere, relative),
                                 # a bare name PATH does not lead to: the absolute path
                                 (["profinject"], elsewhere, os.path.realpath(LAUNCHER)),
                                 (["profinject"], on_path, "profinject")):
            with self.subTest(argv=argv, path=env["PATH"]):
                out = tempfile.mkdtemp()
                run = status_run(argv, out, cwd=build, env=env, executable=LAUNCHER)
                self.assertEqual(run.returncode, 0, run.stderr)
                hint = hint_of(run.stderr)
                self.assertEqual(shlex.split(hint), [named, "analyze", out])
                # it works from where the launcher was run, with that PATH
                pasted = subprocess.run(["sh", "-c", hint.replace(" analyze ", " analyze info ")],
                                        cwd=build, env=env, capture_output=True, text=True)
                self.assertEqual(pasted.returncode, 0, pasted.stderr)
                self.assertIn("trace files: 1", pasted.stdout)


class OneRunPerDirectory(unittest.TestCase):
    def test_a_second_run_into_the_same_directory_is_refused(self):
        work = tempfile.mkdtemp()
        out = os.path.join(work, "traces")
        self.assertEqual(status_run([LAUNCHER], out).returncode, 0)
        self.assertEqual(trace_count(out), 1)
        marker = os.path.join(work, "ran")
        second = subprocess.run([LAUNCHER, "run", "-o", out, "--", "touch", marker],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(second.returncode, 1)
        self.assertIn(f"profinject: {out} already holds traces", second.stderr)
        self.assertIn("--append", second.stderr)
        self.assertFalse(os.path.exists(marker), "the command ran")
        self.assertEqual(trace_count(out), 1)
        # said explicitly, the run adds its files
        appended = status_run([LAUNCHER], out, extra=["--append"])
        self.assertEqual(appended.returncode, 0, appended.stderr)
        self.assertEqual(trace_count(out), 2)


def process_state(pid):
    """The state letter of @pid (Z: ended, not yet reaped), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


class LauncherKilled(unittest.TestCase):
    def test_the_job_ends_when_the_launcher_is_killed(self):
        launcher = subprocess.Popen([LAUNCHER, "run", "-o", tempfile.mkdtemp(), "--", LOOP],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loop = wait_for_loop(launcher.pid)
        try:
            time.sleep(0.2)
            with open(f"/proc/{loop}/cmdline") as f:
                self.assertEqual(f.read().split("\0")[0], LOOP)
            launcher.kill()  # SIGKILL: nothing of the launcher runs any more
            launcher.wait(timeout=10)
            deadline = time.monotonic() + 1.0
            while process_state(loop) not in (None, "Z") and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertIn(process_state(loop), (None, "Z"), "the job outlived the launcher by 1 s")
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(loop, signal.SIGKILL)


class Windows(unittest.TestCase):
    def test_paused_start_windows_and_timed_capture(self):
        out = tempfile.mkdtemp()
        launcher = subprocess.Popen([LAUNCHER, "run", "--paused", "-o", out, "--", LOOP],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_loop(launcher.pid)
            time.sleep(0.2)
            self.assertIn("paused", ctl(launcher.pid, "status").stdout)
            self.assertEqual(ctl(launcher.pid, "start").returncode, 0)
            time.sleep(0.15)
            self.assertEqual(ctl(launcher.pid, "stop").returncode, 0)
            time.sleep(0.15)
            self.assertEqual(ctl(launcher.pid, "capture", "150ms").returncode, 0)
            time.sleep(0.5)
            self.assertIn("paused", ctl(launcher.pid, "status").stdout, "the timed window closed")
        finally:
            launcher.send_signal(signal.SIGTERM)
            launcher.wait(timeout=10)
        events = timeline(out)
        windows, inside, outside = by_window(events)
        self.assertEqual(windows, 2)
        self.assertGreater(len(inside), 1000)
        self.assertEqual(outside, 0, "nothing recorded while paused")
        self.report_covers_the_windows(out, events)

    def test_no_record_crosses_the_edge_of_a_window(self):
        # 100 windows, each edge between two marks a few ns apart: a mark timed
        # before a window opened, or after it closed, is a mark of the pause
        out, output = run_paused("prog_window_edges", "100")
        made = int(re.search(r"^done (\d+)$", output, re.M).group(1))
        windows, inside, outside = by_window(timeline(out))
        self.assertEqual(windows, 100)
        self.assertEqual(outside, 0, "marks of the pauses written as if in a window")
        # the marks kept are marks the program made, each once
        self.assertEqual(len(set(inside)), len(inside))
        self.assertLess(max(inside), made)
        self.assertGreater(len(inside), 1000)

    def test_a_thread_s_cpu_is_what_it_used_inside_the_windows(self):
        # prog_window_cpu: a thread computes 1 s before the first window, then blocks
        # in waits no hook sees and computes in turn; another thread lives inside the
        # second window. The program reads the CPU clocks at the windows' edges itself.
        out, output = run_paused("prog_window_cpu", "3")
        truth = {int(tid): int(cpu) for tid, cpu in (line.split() for line in output.splitlines())}
        self.assertEqual(len(truth), 3)
        [process] = [p for p in json_report(out)["processes"] if p.get("windows")]
        self.assertEqual(len(process["windows"]), 3)
        threads = {t["tid"]: t for t in process["threads"]}
        for tid, cpu in truth.items():
            time_ns = threads[tid]["time_ns"]
            # each edge is read a signal's way and a poll apart by the program and the library
            self.assertAlmostEqual(time_ns["cpu"], cpu, delta=10e6 + 0.05 * cpu, msg=tid)
        # the worker blocked most of each window in waits no hook sees: "other", not CPU
        worker = max((tid for tid in truth if tid != process["pid"]), key=truth.get)
        self.assertGreater(threads[worker]["time_ns"]["other"], 0.4 * 900e6)

    def report_covers_the_windows(self, out, events):
        """The report's times cover the windows only, and it says which they are."""
        [process] = [p for p in json_report(out)["processes"] if "windows" in p]
        windows = process["windows"]
        self.assertEqual(len(windows), 2)
        # as the dump times them (seconds from the process's start)
        marks = [t for t, kind, _ in events if kind == "capture"]
        for window, (opened, closed) in zip(windows, zip(marks[0::2], marks[1::2])):
            self.assertAlmostEqual(window["start_ns"] / 1e9, opened, delta=1e-6)
            self.assertAlmostEqual(window["end_ns"] / 1e9, closed, delta=1e-6)
        self.assertAlmostEqual(windows[1]["end_ns"] - windows[1]["start_ns"], 150e6, delta=60e6,
                               msg="the timed window lasts 150 ms")
        self.assertEqual(process["recorded_ns"],
                         sum(w["end_ns"] - w["start_ns"] for w in windows))
        span = windows[-1]["end_ns"] - windows[0]["start_ns"]
        for thread in process["threads"]:
            self.assertLessEqual(thread["wall_ns"], span + 1000, thread)

    def test_another_user_cannot_control(self):
        with paused_loop(tempfile.mkdtemp()) as loop:
            # the other user is real: setpriv runs as nobody here, or the test means nothing
            who = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup",
                                  "--clear-groups", "id", "-un"], capture_output=True, text=True)
            self.assertEqual(who.stdout.strip(), "nobody", who.stderr)
            refused = ctl(loop, "start", user="nobody")
            self.assertEqual(refused.returncode, 2, refused)
            self.assertIn(f"no process under the profiler answered at pid {loop}", refused.stderr)
            self.assertIn("paused", ctl(loop, "status").stdout)
            socket_dir = f"/tmp/profinject-{os.geteuid()}"
            self.assertEqual(os.stat(socket_dir).st_mode & 0o777, 0o700)
            pid_ns = os.stat(f"/proc/{loop}/ns/pid").st_ino
            self.assertEqual(os.stat(f"{socket_dir}/{loop}.{pid_ns}.sock").st_mode & 0o777, 0o600)

    def test_duration_stops_recording(self):
        out = tempfile.mkdtemp()
        launcher = subprocess.Popen([LAUNCHER, "run", "--duration", "200ms", "-o", out, "--", LOOP],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        launcher_alive = launcher.poll() is None
        for child in children_of(launcher.pid):
            os.kill(int(child), signal.SIGTERM)
        launcher.wait(timeout=10)
        self.assertTrue(launcher_alive, "the job goes on after the recording stopped")
        marks = [t for t, kind, _ in timeline(out) if kind == "mark"]
        self.assertGreater(len(marks), 100)
        # recording went on for 1.5 s had it not stopped; allow for a loaded machine
        self.assertLess(max(marks) - min(marks), 0.8, "no marks long after 200 ms")


    def test_duration_holds_for_processes_started_later(self):
        # A starts inside the 400 ms window and must leave it on time; B starts
        # after it and must record nothing; both are exec'd by sh, not forked
        out = tempfile.mkdtemp()
        script = (f"sleep 0.1; timeout 1.2 {LOOP} & sleep 0.7; timeout 0.6 {LOOP} & wait; "
                  "echo finished")
        run = subprocess.run([LAUNCHER, "run", "--duration", "400ms", "-o", out, "--",
                              "sh", "-c", script], capture_output=True, text=True, timeout=60)
        self.assertTrue(run.stdout.endswith("finished\n"), run.stderr)
        loops = []  # (pid, marks in seconds from the loop's own start)
        for name in os.listdir(out):
            path = os.path.join(out, name)
            header = subprocess.run([ANALYZE, "info", path], capture_output=True, text=True).stdout
            if re.search(r"^command: \S*prog_loop", header, re.M):
                text = subprocess.run([ANALYZE, "dump", path], capture_output=True, text=True).stdout
                pid = int(re.search(r"^pid: (\d+)", header, re.M).group(1))
                loops.append((pid, [float(t) for t in
                                    re.findall(r"^\d+ ([+-][\d.]+) tid=\d+ mark", text, re.M)]))
        self.assertEqual(len(loops), 2, "two loops, one file each")
        (_, first), (_, second) = sorted(loops)  # pids in start order
        self.assertGreater(len(first), 20, "the loop started inside the window recorded")
        # the window ends 0.4 s after the launch, 0.3 s into the first loop's life
        self.assertLess(max(first), 0.45, "nothing recorded long after the window ended")
        self.assertEqual(second, [], "the loop started after the window recorded nothing")

    def test_no_signal_for_a_process_without_our_handler(self):
        # control off, or the library disabled: the process maps the library but
        # handles no control signal, whose default action would end it (169)
        for setting in ("PROFINJECT_CONTROL=0", "PROFINJECT_DISABLE=1"):
            with self.subTest(setting=setting):
                out = tempfile.mkdtemp()
                run = subprocess.run([LAUNCHER, "run", "--duration", "300ms", "-o", out, "--",
                                      "env", setting, sys.executable, "-c",
                                      "import time; time.sleep(1.5); print('done')"],
                                     capture_output=True, text=True, timeout=60)
                self.assertEqual((run.returncode, run.stdout), (0, "done\n"), run)
                # it lives until its input ends: no time a loaded machine could outrun
                job = subprocess.Popen([LAUNCHER, "run", "--append", "-o", out, "--", "env",
                                        setting, sys.executable, "-c",
                                        "import sys; sys.stdin.read(); print('done')"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, text=True)
                python = None
                for _ in range(300):
                    found = [int(c) for c in children_of(job.pid)]
                    # the python image, not env before its exec (whose command line names
                    # the same program, and which has control on)
                    if found and open(f"/proc/{found[0]}/cmdline", "rb").read().startswith(
                            sys.executable.encode() + b"\0") and pi_library_mapped(found[0]):
                        python = found[0]
                        break
                    time.sleep(0.01)
                self.assertIsNotNone(python)
                stop = ctl(python, "stop")
                self.assertEqual(stop.returncode, 2)
                self.assertIn(f"profinject: {python}: not reached: it maps the library but has "
                              "no control socket here and does not handle the control signal",
                              stop.stderr)
                self.assertEqual(job.communicate("", timeout=30)[0], "done\n")
                self.assertEqual(job.returncode, 0)


class Container(unittest.TestCase):
    def test_capture_from_outside_a_pid_namespace(self):
        if not shutil.which("unshare"):
            self.skipTest("unshare not installed")
        out = tempfile.mkdtemp()
        inner = subprocess.Popen(["unshare", "--fork", "--pid", "--mount-proc", LAUNCHER, "run",
                                  "--paused", "-o", out, "--", LOOP],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            loop = None
            for _ in range(300):
                found = subprocess.run(["pgrep", "-f", "-n", "^" + LOOP + "$"], capture_output=True,
                                       text=True).stdout.split()
                if found:
                    loop = int(found[0])
                    break
                time.sleep(0.01)
            self.assertIsNotNone(loop, "the job started in its namespace")
            time.sleep(0.2)
            result = ctl(loop, "capture", "150ms")
            self.assertEqual(result.returncode, 0, result.stderr)
            time.sleep(0.4)
        finally:
            subprocess.run(["pkill", "-TERM", "-f", "^" + LOOP + "$"])
            inner.wait(timeout=10)
        [name] = [f for f in os.listdir(out) if f.endswith(".pitrace.zst")]
        header = subprocess.run([ANALYZE, "info", os.path.join(out, name)], capture_output=True,
                                text=True).stdout
        inner_pid = int(re.search(r"^pid: (\d+)", header, re.M).group(1))
        self.assertNotEqual(inner_pid, loop, "the trace has the pid inside the namespace")
        marks = [t for t, kind, _ in timeline(out) if kind == "mark"]
        self.assertGreater(len(marks), 100, "the window opened from outside was recorded")


    def test_two_namespaces_with_the_same_pids_share_one_control_directory(self):
        sockets, out = tempfile.mkdtemp(), tempfile.mkdtemp()
        os.chmod(sockets, 0o700)
        env = dict(os.environ, PROFINJECT_CONTROL_DIR=sockets)
        jobs = [subprocess.Popen(["unshare", "--fork", "--pid", "--mount-proc", LAUNCHER, "run",
                                  "--paused", "-o", out, "--", LOOP], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                for _ in range(2)]
        try:
            for _ in range(300):
                names = [n for n in os.listdir(sockets) if n.endswith(".sock")]
                loops = subprocess.run(["pgrep", "-f", "^" + LOOP + "$"], capture_output=True,
                                       text=True).stdout.split()
                if len(names) == 2 and len(loops) == 2:
                    break
                time.sleep(0.01)
            # the launcher is pid 1 of each namespace, its job pid 2: one pid, two sockets
            self.assertEqual(sorted(n.split(".")[0] for n in names), ["2", "2"], names)
            self.assertEqual(len(set(names)), 2)
            for loop in loops:
                answer = subprocess.run([LAUNCHER, "ctl", loop, "status"], env=env,
                                        capture_output=True, text=True)
                self.assertEqual(answer.returncode, 0, answer.stderr)
                # the process that answered says which it is: its own pid, 2 inside
                self.assertRegex(answer.stdout, rf"^{loop}: paused 2 {re.escape(out)}/")
        finally:
            subprocess.run(["pkill", "-TERM", "-f", "^" + LOOP + "$"])
            for job in jobs:
                job.wait(timeout=10)

    def window_in_another_mount_namespace(self, remove_socket):
        """A paused job in its own mount namespace with a /tmp of its own (its
        control socket there); ctl start, then stop. What ctl printed for each,
        and the job's capture records and marks."""
        out = tempfile.mkdtemp(dir="/var/tmp")  # outside the job's own /tmp
        # a build tree under /tmp (a clone there) is bound back into the job's /tmp
        tree, keep = os.path.commonpath([LAUNCHER, LOOP]), tempfile.mkdtemp(dir="/var/tmp")
        restore = ""
        if os.path.commonpath([tree, "/tmp"]) == "/tmp":
            restore = (f"mount --bind /tmp {keep} && mount -t tmpfs none /tmp && "
                       f"mkdir -p {tree} && mount --bind {keep}{tree[len('/tmp'):]} {tree} && ")
        script = (restore or "mount -t tmpfs none /tmp && ") + \
            f"exec {LAUNCHER} run --paused -o {out} -- {LOOP}"
        job = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(os.rmdir, keep)  # empty here: the bind was the job's own
        try:
            loop = None
            for _ in range(300):
                found = subprocess.run(["pgrep", "-f", "-n", "^" + LOOP + "$"],
                                       capture_output=True, text=True).stdout.split()
                if found and "pi-control-sig" in thread_names(int(found[0])):
                    loop = int(found[0])
                    break
                time.sleep(0.01)
            self.assertIsNotNone(loop, "the job and its control thread started")
            if remove_socket:
                sockets = f"/proc/{loop}/root/tmp/profinject-{os.geteuid()}"
                for name in os.listdir(sockets):
                    os.unlink(os.path.join(sockets, name))
            started = ctl(loop, "start")
            self.assertEqual(started.returncode, 0, started.stderr)
            time.sleep(0.3)
            stopped = ctl(loop, "stop")
            time.sleep(0.3)
        finally:
            subprocess.run(["pkill", "-TERM", "-f", "^" + LOOP + "$"])
            job.wait(timeout=10)
        events = timeline(out)
        captures = [opened for _, kind, opened in events if kind == "capture"]
        self.assertEqual(captures[:2], [True, False], "one window, opened and closed")
        marks = [t for t, kind, _ in events if kind == "mark"]
        self.assertGreater(len(marks), 50, "the window recorded the job")
        return loop, started.stdout, stopped.stdout

    def test_ctl_reaches_a_socket_in_another_mount_namespace_through_its_root(self):
        loop, started, stopped = self.window_in_another_mount_namespace(remove_socket=False)
        self.assertTrue(started.startswith(f"{loop}: recording "), started)
        self.assertTrue(stopped.startswith(f"{loop}: paused "), stopped)

    def test_the_signal_opens_a_window_where_the_socket_cannot_be_reached(self):
        # its socket removed: ctl signals it; the window's work runs in our thread
        loop, started, stopped = self.window_in_another_mount_namespace(remove_socket=True)
        self.assertIn(f"{loop}: signalled (start)", started)
        self.assertIn(f"{loop}: signalled (stop)", stopped)

    def test_a_control_directory_too_long_is_refused_not_shortened(self):
        sockets = os.path.join(tempfile.mkdtemp(), "d" * 80)
        run = subprocess.run([LAUNCHER, "run", "-o", tempfile.mkdtemp(), "--", "/bin/true"],
                             env=dict(os.environ, PROFINJECT_CONTROL_DIR=sockets),
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0)
        self.assertIn(f"PROFINJECT_CONTROL_DIR is {len(sockets)} bytes long; a control socket's "
                      "path must fit in 108 bytes, which leaves the directory 70: on-demand "
                      "capture is off", run.stderr)
        self.assertFalse(os.path.exists(sockets[:70]), "no directory at a shortened path")
        refused = subprocess.run([LAUNCHER, "ctl", "1", "status"], capture_output=True, text=True,
                                 env=dict(os.environ, PROFINJECT_CONTROL_DIR=sockets))
        self.assertEqual(refused.returncode, 2)
        self.assertIn("which leaves the directory 70", refused.stderr)


class ControlSocketLife(unittest.TestCase):
    """The socket is made at the first flush, at most 100 ms in (a process that ends before
    never has one): control must still reach a process at once, and no socket outlives one."""

    def test_a_process_is_controllable_at_once_whatever_its_flush_interval(self):
        sockets = tempfile.mkdtemp()
        os.chmod(sockets, 0o700)
        env = dict(os.environ, PROFINJECT_CONTROL_DIR=sockets, PROFINJECT_FLUSH_MS="60000")
        launcher = subprocess.Popen([LAUNCHER, "run", "--paused", "-o", tempfile.mkdtemp(), "--",
                                     LOOP], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        try:
            loop = wait_for_loop(launcher.pid)
            asked = time.monotonic()
            answer = subprocess.run([LAUNCHER, "ctl", str(loop), "status"], env=env,
                                    capture_output=True, text=True)
            self.assertEqual(answer.returncode, 0, answer.stderr)
            self.assertIn("paused", answer.stdout)
            # a 60 s flush interval does not hold the socket back
            self.assertLess(time.monotonic() - asked, 5)
        finally:
            launcher.send_signal(signal.SIGTERM)
            launcher.wait(timeout=10)
        self.assertEqual([n for n in os.listdir(sockets) if n.endswith(".sock")], [],
                         "the socket went with the process")

    def test_short_processes_leave_no_socket_and_a_whole_trace(self):
        sockets, out, idle = tempfile.mkdtemp(), tempfile.mkdtemp(), tempfile.mkdtemp()
        os.chmod(sockets, 0o700)
        env = dict(os.environ, PROFINJECT_CONTROL_DIR=sockets)
        for _ in range(10):
            # 100 marks and its end: a whole trace of its own
            run = subprocess.run([LAUNCHER, "run", "--append", "-o", out, "--",
                                  os.path.join(PROGRAMS, "prog_status"), "0", "100"], env=env,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, run.stderr)
            # nothing recorded before it ended: nothing to keep, no file
            run = subprocess.run([LAUNCHER, "run", "-o", idle, "--", "/bin/true"], env=env,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn(f"profinject: no trace in {idle}: the program ended within its first "
                          "100 ms without a call the profiler records", run.stderr)
        self.assertEqual([n for n in os.listdir(sockets) if n.endswith(".sock")], [])
        self.assertEqual(os.listdir(idle), [], "/bin/true recorded nothing")
        files = [n for n in os.listdir(out) if n.endswith(".pitrace.zst")]
        self.assertEqual(len(files), 10)
        for name in files:
            info = subprocess.run([ANALYZE, "info", os.path.join(out, name)],
                                  capture_output=True, text=True)
            self.assertEqual(info.returncode, 0, info.stderr)
            self.assertNotIn("truncated", info.stdout + info.stderr)


class ControlTimeouts(unittest.TestCase):
    def test_an_idle_client_does_not_hold_the_listener(self):
        with paused_loop(tempfile.mkdtemp()) as loop:
            pid_ns = os.stat(f"/proc/{loop}/ns/pid").st_ino
            idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            idle.connect(f"/tmp/profinject-{os.geteuid()}/{loop}.{pid_ns}.sock")  # and says nothing
            start = time.monotonic()
            answer = ctl(loop, "status")
            self.assertEqual(answer.returncode, 0, answer.stderr)
            self.assertIn("paused", answer.stdout)
            self.assertLess(time.monotonic() - start, 4.0, "answered after the idle client's deadline")
            idle.close()

    def test_ctl_gives_up_after_its_timeout(self):
        # a socket that accepts and never answers, where ctl looks for this process's
        sockets = tempfile.mkdtemp()
        os.chmod(sockets, 0o700)
        me, pid_ns = os.getpid(), os.stat("/proc/self/ns/pid").st_ino
        silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        silent.bind(f"{sockets}/{me}.{pid_ns}.sock")
        silent.listen(1)
        start = time.monotonic()
        run = subprocess.run([LAUNCHER, "ctl", "--timeout", "300ms", str(me), "status"],
                             env=dict(os.environ, PROFINJECT_CONTROL_DIR=sockets),
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"profinject: {me}: no answer within 300 ms (--timeout)", run.stderr)
        self.assertLess(time.monotonic() - start, 3.0)
        silent.close()


TORCH_LOOP = """
import json, sys, time, torch
torch.manual_seed(0)
x = torch.randn(64, 64)
print("ready", flush=True)
total, opened = 0.0, []
for i in range(int(sys.argv[2])):
    opened.append(time.monotonic())
    with open(sys.argv[1], "rb") as f:
        f.read()
    total += float((x @ x).sum())
    time.sleep(0.002)
print("done %.3f" % total, flush=True)
with open(sys.argv[3], "w") as f:
    json.dump(opened, f)  # when it opened the file, by its own clock
"""


def io_records(traces):
    """(seconds, op) of open/read/close records, and (seconds, opened) of capture records."""
    io, captures = [], []
    for text in dumps(traces):
        for t, rest in re.findall(r"^\d+ ([+-][\d.]+) tid=\d+ io (\w+)", text, re.M):
            io.append((float(t), rest))
        for t, rest in re.findall(r"^\d+ ([+-][\d.]+) tid=\d+ capture(.*)$", text, re.M):
            captures.append((float(t), " args=1," in rest))
    return sorted(io), sorted(captures)


def cuda_records(traces):
    """(seconds, (api, bytes, nested)) of allocations and launches."""
    calls = []
    for text in dumps(traces):
        for t, api, rest in re.findall(r"^\d+ ([+-][\d.]+) tid=\d+ gpu_alloc (\w+)(.*)$", text,
                                       re.M):
            size = int(re.search(r"bytes=(\d+)", rest).group(1))
            calls.append((float(t), (api, size, " nested " in rest)))
        for t, kernel in re.findall(r"^\d+ ([+-][\d.]+) tid=\d+ gpu_launch \w+ .*kernel=\"(\w+)\"",
                                    text, re.M):
            calls.append((float(t), ("launch " + kernel, 0, False)))
    return sorted(calls)


def attach(pid, out, duration, timeout):
    """profinject attach PID for @duration, traces in @out."""
    return subprocess.run([LAUNCHER, "attach", str(pid), "-o", out, "--duration", duration],
                          capture_output=True, text=True, timeout=timeout)


def report_text(traces):
    return subprocess.run([ANALYZE, traces], capture_output=True, text=True).stdout


class Attach(unittest.TestCase):
    def setUp(self):
        self.data = os.path.join(tempfile.mkdtemp(), "data")
        with open(self.data, "wb") as f:
            f.write(b"x" * 1000)

    def attach_then_record_after_detach(self, argv, out):
        """Run @argv, attach for 1 s, detach, then open a 0.3 s window: the
        process must run on. Return when that window opened (trace seconds)."""
        target = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(target.stdout.readline(), "started\n")
            attached = attach(target.pid, out, "1s", timeout=60)
            self.assertEqual(attached.returncode, 0, attached.stderr)
            self.assertIn("detached", attached.stdout)
            # after detach the calls no longer reach the profiler, even while recording
            self.assertEqual(ctl(target.pid, "start").returncode, 0)
            time.sleep(0.3)
            self.assertEqual(ctl(target.pid, "stop").returncode, 0)
            self.assertIsNone(target.poll(), "the process runs on after detach")
        finally:
            target.kill()
            target.wait()
        # recording starts at attach; the one window opened is the one after detach
        captures = io_records(out)[1]
        opened = [t for t, is_open in captures if is_open]
        self.assertEqual(len(opened), 1, captures)
        return opened[0]

    def output_when_attached_briefly(self, argv, duration, timeout):
        """Run @argv to its end with an attach of @duration, each step within @timeout
        seconds; what it printed after "started"."""
        target = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(target.stdout.readline(), "started\n")
            attached = attach(target.pid, tempfile.mkdtemp(), duration, timeout)
            rest, _ = target.communicate(timeout=timeout)
        finally:
            target.kill()
            target.wait()
        self.assertEqual(attached.returncode, 0, attached.stderr)
        return rest

    def report_covers_the_attach_window(self, out):
        """The report covers the 1 s attach window, not the process's life
        before it nor after the detach."""
        [process] = [p for p in json_report(out)["processes"] if p.get("windows")]
        windows = process["windows"]
        self.assertAlmostEqual((windows[0]["end_ns"] - windows[0]["start_ns"]) / 1e9, 1.0,
                               delta=0.5, msg="attached for 1 s")
        span = windows[-1]["end_ns"] - windows[0]["start_ns"]
        for thread in process["threads"]:
            self.assertLessEqual(thread["wall_ns"], span + 1000, thread)

    def test_attach_records_then_detach_restores(self):
        out = tempfile.mkdtemp()
        opened = self.attach_then_record_after_detach(
            [os.path.join(PROGRAMS, "prog_reader"), self.data], out)
        io, _ = io_records(out)
        during = [op for t, op in io if t < opened]
        after = [op for t, op in io if t >= opened]
        # one open every ~2 ms for 1 s; a loaded machine gets fewer
        self.assertGreater(during.count("open"), 100)
        self.assertLessEqual(abs(during.count("open") - during.count("close")), 1)
        self.assertEqual(after, [], "calls after detach went to the profiler")
        self.assertIn(self.data, report_text(out))
        self.report_covers_the_attach_window(out)

    def test_a_thread_s_cpu_is_what_it_used_while_attached(self):
        # a thread that computed for a second before the attach, then blocks in waits
        # no hook sees and computes in turn; the program prints its CPU clock every 10 ms
        out = tempfile.mkdtemp()
        target = subprocess.Popen([os.path.join(PROGRAMS, "prog_window_cpu"), "attach"],
                                  stdout=subprocess.PIPE, text=True)
        try:
            started = target.stdout.readline().split()
            self.assertEqual(started[0], "started")
            attached = attach(target.pid, out, "1s", timeout=60)
            self.assertEqual(attached.returncode, 0, attached.stderr)
            detached = time.monotonic_ns()
            # its samples until one after the detach, however late it prints on a loaded
            # machine: the window lies between its first and that one
            lines = []
            for line in target.stdout:
                lines.append(line)
                if int(line.split()[0]) > detached:
                    break
        finally:
            target.kill()
            rest, _ = target.communicate()
        clock = [tuple(map(int, line.split())) for line in lines + rest.splitlines()]
        report = json_report(out)
        [process] = [p for p in report["processes"] if p.get("windows")]
        [window] = process["windows"]
        base = report["inputs"]["base_monotonic_ns"]

        def cpu_at(ns):  # the program's samples, 10 ms apart, interpolated
            for (t0, c0), (t1, c1) in zip(clock, clock[1:]):
                if t0 <= ns <= t1:
                    return c0 + (c1 - c0) * (ns - t0) / (t1 - t0)
            raise AssertionError(f"no sample around {ns}")
        truth = cpu_at(base + window["end_ns"]) - cpu_at(base + window["start_ns"])
        [worker] = [t for t in process["threads"] if t["tid"] == int(started[1])]
        self.assertAlmostEqual(worker["time_ns"]["cpu"], truth, delta=20e6 + 0.05 * truth)

    def test_attach_redirects_driver_tables_filled_before(self):
        program = os.path.join(PROGRAMS, "prog_cuda_attach")
        if not os.path.exists(program):
            self.skipTest("built without the CUDA headers")
        out = tempfile.mkdtemp()
        opened = self.attach_then_record_after_detach([program], out)
        calls = cuda_records(out)
        during = [call for t, call in calls if t < opened]
        # one iteration every ~2 ms for 1 s; a loaded machine gets fewer
        runtime = during.count(("cudaMalloc", 1 * MiB, False))
        self.assertGreater(runtime, 100)
        # the program's own table, filled through cuGetProcAddress before attach
        self.assertLessEqual(abs(during.count(("cuMemAlloc", 2 * MiB, False)) - runtime), 1)
        self.assertLessEqual(abs(during.count(("launch _Z6kernelPf", 0, False)) - runtime), 1)
        # kernels fetched before attach are named from their handles by the driver: a
        # library kernel, and the runtime's handle of nvcc 13's <<<>>>
        self.assertLessEqual(abs(during.count(("launch _Z4gemmv", 0, False)) - runtime), 1)
        self.assertLessEqual(abs(during.count(("launch _Z4stepv", 0, False)) - runtime), 1)
        # cudart's table: each runtime allocation has its driver child, marked nested
        # (one call in flight when the window ends keeps its child: the child's
        # record is written first, the runtime call's as it returns)
        nested = during.count(("cuMemAlloc", 1 * MiB, True))
        self.assertIn(nested - runtime, (0, 1))
        self.assertEqual([call for t, call in calls if t >= opened], [],
                         "driver calls after detach went to the profiler")

    def test_registers_of_a_computation_survive_attach(self):
        # stopped in the middle of a loop that keeps a pattern in every SSE
        # register: the calls made inside must not leave their values there
        self.assertEqual(self.output_when_attached_briefly(
            [os.path.join(PROGRAMS, "prog_vector_spin"), "2.5"], "0.3s", timeout=60), "intact\n")

    def test_attach_waits_until_the_thread_is_outside_malloc(self):
        # stopped inside malloc, the remote dlopen would wait for the arena
        # lock its own thread holds; without the safe-point check most of
        # these attaches hang the target
        for _ in range(3):
            self.assertEqual(self.output_when_attached_briefly(
                [os.path.join(PROGRAMS, "prog_malloc_spin"), "1.5"], "0.2s", timeout=30), "done\n")

    def test_attach_to_pytorch(self):
        work = tempfile.mkdtemp()
        script, plain_opens, opens_file = (os.path.join(work, name) for name in
                                           ("loop.py", "plain.json", "opens.json"))
        with open(script, "w") as f:
            f.write(TORCH_LOOP)
        plain = subprocess.run([sys.executable, script, self.data, "800", plain_opens],
                               capture_output=True, text=True, timeout=300)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        out = tempfile.mkdtemp()
        target = subprocess.Popen([sys.executable, script, self.data, "800", opens_file],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(target.stdout.readline(), "ready\n")
        before = time.monotonic()
        attached = attach(target.pid, out, "1s", timeout=120)
        after = time.monotonic()
        rest, errors = target.communicate(timeout=300)
        self.assertEqual(attached.returncode, 0, attached.stderr)
        self.assertEqual(target.returncode, 0, errors)
        self.assertEqual("ready\n" + rest, plain.stdout, "same result as without the profiler")
        io, _ = io_records(out)
        recorded = [op for _, op in io].count("open")
        with open(opens_file) as f:
            opened = json.load(f)
        # the window lies within the attach command's run and ends as it returns, 1 s
        # after it opened: every open of the loop's own in its middle was recorded, and
        # none from outside the command's run
        middle = [t for t in opened if after - 0.8 <= t <= after - 0.4]
        self.assertGreater(len(middle), 10, "the loop ran while attached")
        self.assertGreaterEqual(recorded, len(middle))
        self.assertLessEqual(recorded, len([t for t in opened if before <= t <= after]))
        self.assertIn(self.data, report_text(out))
        self.report_covers_the_attach_window(out)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
