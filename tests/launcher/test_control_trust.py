#!/usr/bin/env python3
"""What the control channel trusts. `profinject ctl` talks only to a socket
held by the process it was given (the kernel's SO_PEERCRED, not the socket's
name) and prints what it answers with its control characters escaped; a
process that cannot make its socket says so; no socket outlives its image
(exec, SIGKILL); a fork child answers on its own, without its parent's; an
unusable PROFINJECT_CONTROL_DIR is told. Another user is
`nobody`, for real: a forked child that gave up root."""
import contextlib
import grp
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_launcher import thread_names  # noqa: E402  (the launcher's tests, beside this file)

LAUNCHER = os.environ["PI_LAUNCHER"]
ANALYZE = os.environ["PI_ANALYZE"]
LIBRARY = os.environ["PI_LIBRARY"]
PROGRAMS = os.environ["PI_PROGRAMS"]
LOOP = os.path.join(PROGRAMS, "prog_loop")
ATTACKER_TEXT = b"paused 1 /tmp/\x1b]0;owned\x07\x1b[2J\x1b[31mFAKE"
PID_NS = os.stat("/proc/self/ns/pid").st_ino


def nobody():
    """(uid, gid) of the user nobody, or a failure: the test means nothing as root."""
    if os.geteuid() != 0:
        raise unittest.SkipTest("needs root to act as another user")
    user = pwd.getpwnam("nobody")
    try:
        group = grp.getgrnam("nogroup").gr_gid
    except KeyError:
        group = user.pw_gid
    return user.pw_uid, group


def private_dir():
    path = tempfile.mkdtemp()
    os.chmod(path, 0o700)
    return path


def socket_address(name):
    """An abstract name is written '@name', as /proc/net/unix lists it."""
    return "\0" + name[1:] if name.startswith("@") else name


@contextlib.contextmanager
def squatter(name, make_dir=None):
    """A process of nobody's listening on @name that answers ATTACKER_TEXT to
    anyone: (its pid, a function returning what it was sent so far)."""
    uid, gid = nobody()
    ready_r, ready_w = os.pipe()
    told_r, told_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(told_r)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(socket_address(name))
            listener.listen(8)
            os.write(ready_w, b"r")
            while True:
                client, _ = listener.accept()
                client.settimeout(2)
                try:
                    os.write(told_w, b"[" + client.recv(256) + b"]")
                    client.sendall(ATTACKER_TEXT + b"\n")
                except OSError:
                    pass
                client.close()
        finally:
            os._exit(1)
    os.close(ready_w)
    os.close(told_w)
    os.set_blocking(told_r, False)
    try:
        if os.read(ready_r, 1) != b"r":
            raise AssertionError(f"nobody could not bind {name}")

        def told():
            try:
                return os.read(told_r, 4096)
            except BlockingIOError:
                return b""

        yield pid, told
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(ready_r)
        os.close(told_r)


def ctl(pid, *command, env=None):
    return subprocess.run([LAUNCHER, "ctl", str(pid), *command], capture_output=True,
                          env=env, timeout=60)


def first_child(pid):
    """The first child of @pid, once it has one."""
    def children():
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return f.read().split()
    wait_for(children, f"a child of {pid}")
    return int(children()[0])


def controlled_child(launcher):
    """The program `profinject run` started, once its control thread runs."""
    pid = first_child(launcher)
    wait_for(lambda: any(name.startswith("pi-control") for name in thread_names(pid)),
             f"the control thread of {pid}")
    return pid


def wait_for(condition, what, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"{what} did not happen within {seconds} s")


def capture_timeline(traces):
    """(seconds, 'open'|'close'|'mark') of every trace in @traces, in time order."""
    events = []
    for name in os.listdir(traces):
        text = subprocess.run([ANALYZE, "dump", os.path.join(traces, name)],
                              capture_output=True, text=True).stdout
        for at, kind, rest in re.findall(r"^\d+ ([+-][\d.]+) tid=\d+ (capture|mark)(.*)$", text,
                                         re.M):
            if kind == "capture":
                kind = "open" if " args=1," in rest else "close"
            events.append((float(at), kind))
    return sorted(events)


class Client(unittest.TestCase):
    def test_a_socket_another_user_bound_under_the_target_s_name_is_refused(self):
        # root's unprofiled sleep; nobody binds a socket whose name ends as the
        # sleep's would, in the abstract namespace or in a directory of its own
        target = subprocess.Popen(["sleep", "60"])
        self.addCleanup(target.wait)
        self.addCleanup(target.kill)
        theirs = tempfile.mkdtemp()
        os.chown(theirs, *nobody())
        for where in ("@pi-squat-%d" % os.getpid(), theirs):
            with self.subTest(where=where), \
                    squatter(f"{where}/{target.pid}.{PID_NS}.sock") as (fake, told):
                answer = ctl(target.pid, "status")
                said = answer.stdout + answer.stderr
                self.assertNotEqual(answer.returncode, 0, said)
                self.assertNotIn(b"FAKE", said, "the other user's text was printed")
                self.assertNotIn(b"\x1b", said)
                self.assertIn(f"profinject: {target.pid}: refused the control socket "
                              f"{where}/{target.pid}.{PID_NS}.sock: it is held by pid {fake} "
                              f"(uid {nobody()[0]}), not by process {target.pid}".encode(),
                              answer.stderr)
                time.sleep(0.1)
                self.assertNotIn(b"status", told(), "the request went to the other user")

    def test_a_reply_is_printed_with_its_control_characters_escaped(self):
        # a socket of this very process (the peer ctl checks), answering bytes a
        # terminal would act on
        sockets, me = private_dir(), os.getpid()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(f"{sockets}/{me}.{PID_NS}.sock")
        listener.listen(1)
        self.addCleanup(listener.close)

        def answer_once():
            client, _ = listener.accept()
            client.recv(64)
            client.sendall(b"paused 7 /tmp/a\x1b[31mred\x07\tb\\c\x00\xc3\xa9\n")
            client.close()

        server = threading.Thread(target=answer_once)
        server.start()
        run = ctl(me, "status", env=dict(os.environ, PROFINJECT_CONTROL_DIR=sockets))
        server.join(timeout=30)
        self.assertEqual(run.returncode, 0, run.stderr)
        # every byte printable ASCII but the line's end; each other byte as \xNN,
        # tab as \t, the backslash doubled
        self.assertEqual(run.stdout,
                         f"{me}: paused 7 /tmp/a\\x1b[31mred\\x07\\tb\\\\c\\x00\\xc3\\xa9\n"
                         .encode())


@contextlib.contextmanager
def preloaded_loop(env, before_start=None):
    """prog_loop under the library, started by us (its pid known before it
    runs: @before_start(pid) is called first): (pid, its stderr's path)."""
    stderr_path = os.path.join(tempfile.mkdtemp(), "stderr")
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(go_w)
            os.read(go_r, 1)
            fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT, 0o600)
            os.dup2(fd, 2)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.execve(LOOP, [LOOP], env)
        finally:
            os._exit(127)
    os.close(go_r)
    try:
        if before_start:
            before_start(pid)
        os.write(go_w, b"g")
        os.close(go_w)
        wait_for(lambda: "pi-control-sig" in thread_names(pid), "the control thread's start")
        yield pid, stderr_path
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)


class Library(unittest.TestCase):
    def test_a_process_whose_socket_name_is_taken_says_so_and_stop_still_stops(self):
        # the abstract control directory of attach: nobody binds the name first
        out, name = tempfile.mkdtemp(), "@pi-taken-%d" % os.getpid()
        env = dict(os.environ, LD_PRELOAD=LIBRARY, PROFINJECT_OUTPUT=out,
                   PROFINJECT_CONTROL_DIR=name)
        with contextlib.ExitStack() as stack:
            def squat(pid):
                stack.enter_context(squatter(f"{name}/{pid}.{PID_NS}.sock"))

            loop, stderr_path = stack.enter_context(preloaded_loop(env, squat))
            time.sleep(0.3)  # recording
            stopped = ctl(loop, "stop")
            time.sleep(0.3)  # paused: nothing more is recorded
        said = stopped.stdout + stopped.stderr
        self.assertNotIn(b"FAKE", said)
        self.assertIn(f"profinject: {loop}: refused the control socket".encode(), stopped.stderr)
        with open(stderr_path) as f:
            told = [line for line in f.read().splitlines() if "control socket" in line]
        self.assertEqual(told, [f"profinject: cannot make the control socket {name}/{loop}."
                                f"{PID_NS}.sock (another process holds that name); 'profinject "
                                "ctl' reaches this process by signal only (start and stop)"])
        # the process itself says when it stopped recording: a window closed, no mark after
        events = capture_timeline(out)
        closes = [at for at, kind in events if kind == "close"]
        self.assertEqual(len(closes), 1, "ctl stop closed the window")
        marks = [at for at, kind in events if kind == "mark"]
        self.assertGreater(len(marks), 100)
        self.assertLessEqual(max(marks), closes[0], "recording went on after stop")


def sockets_in(path):
    return sorted(n for n in os.listdir(path) if n.endswith(".sock"))


class SocketLife(unittest.TestCase):
    def test_no_socket_outlives_an_image_that_exec_replaced(self):
        # sh makes its socket, then becomes /bin/true, which ends before making one
        sockets, out = private_dir(), tempfile.mkdtemp()
        env = dict(os.environ, PROFINJECT_CONTROL_DIR=sockets)
        launcher = subprocess.Popen([LAUNCHER, "run", "-o", out, "--", "sh", "-c",
                                     "sleep 0.6; exec /bin/true"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        shell = first_child(launcher.pid)
        wait_for(lambda: f"{shell}.{PID_NS}.sock" in sockets_in(sockets), "sh's socket")
        launcher.communicate(timeout=60)
        self.assertEqual(launcher.returncode, 0)
        self.assertEqual(sockets_in(sockets), [], "a socket outlived its process image")

    def test_a_failed_exec_keeps_the_socket(self):
        sockets = private_dir()
        env = dict(os.environ, PROFINJECT_CONTROL_DIR=sockets)
        script = ("import os, sys, time\n"
                  "time.sleep(0.3)\n"
                  "try: os.execv('/nonexistent/program', ['x'])\n"
                  "except OSError: print('failed', flush=True)\n"
                  "time.sleep(30)\n")
        launcher = subprocess.Popen([LAUNCHER, "run", "--paused", "-o", tempfile.mkdtemp(), "--",
                                     sys.executable, "-c", script], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            self.assertEqual(launcher.stdout.readline(), "failed\n")
            python = first_child(launcher.pid)
            answer = ctl(python, "status", env=env)
            self.assertEqual(answer.returncode, 0, answer.stderr)
            self.assertTrue(answer.stdout.startswith(f"{python}: paused ".encode()), answer)
            self.assertEqual(sockets_in(sockets), [f"{python}.{PID_NS}.sock"])
        finally:
            launcher.send_signal(signal.SIGTERM)
            launcher.communicate(timeout=10)

    def test_a_fork_child_answers_on_its_own_socket_and_holds_not_its_parent_s(self):
        # samples 200 ms apart made a writer settle at its first wake: before the library
        # asked to make its socket then (the parent had none), and in a child as its fork
        # handlers ran (one closed the child's socket, and kept the parent's)
        sockets = private_dir()
        env = dict(os.environ, PROFINJECT_CONTROL_DIR=sockets, PROFINJECT_SAMPLE_MS="200")
        script = ("import os, time\n"
                  "time.sleep(0.3)\n"
                  "child = os.fork()\n"
                  "if child == 0: time.sleep(30); os._exit(0)\n"
                  "print(child, flush=True)\n"
                  "time.sleep(30)\n")
        for attempt in range(5):  # the race was lost about one fork in two
            with self.subTest(attempt=attempt):
                parent = subprocess.Popen([sys.executable, "-c", script], text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          env=dict(env, LD_PRELOAD=LIBRARY,
                                                   PROFINJECT_OUTPUT=tempfile.mkdtemp()))
                child = int(parent.stdout.readline())
                try:
                    for pid in (parent.pid, child):
                        wait_for(lambda: f"{pid}.{PID_NS}.sock" in sockets_in(sockets),
                                 f"the socket of {pid}", seconds=5)
                    answer = ctl(child, "status", env=env)
                    self.assertEqual(answer.returncode, 0, answer.stderr)
                    self.assertTrue(answer.stdout.startswith(f"{child}: recording ".encode()),
                                    answer)
                    # the kernel's list of listening sockets: the parent's, held by the child?
                    held = {os.readlink(f"/proc/{child}/fd/{fd}")
                            for fd in os.listdir(f"/proc/{child}/fd")}
                    with open("/proc/net/unix") as f:
                        inode = next(line.split()[6] for line in f
                                     if line.rstrip().endswith(f"/{parent.pid}.{PID_NS}.sock"))
                    self.assertNotIn(f"socket:[{inode}]", held,
                                     "the child holds its parent's control socket")
                finally:
                    os.kill(child, signal.SIGKILL)
                    parent.kill()
                    parent.wait(timeout=10)

    def test_sockets_of_killed_processes_are_removed_by_the_next_one(self):
        sockets = private_dir()
        env = dict(os.environ, PROFINJECT_CONTROL_DIR=sockets)
        # pids that were and are no more
        dead = []
        for _ in range(3):
            gone = subprocess.Popen(["true"])
            gone.wait()
            dead.append(gone.pid)
        killed = subprocess.Popen([LAUNCHER, "run", "-o", tempfile.mkdtemp(), "--", LOOP],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loop = first_child(killed.pid)
        wait_for(lambda: f"{loop}.{PID_NS}.sock" in sockets_in(sockets), "the loop's socket")
        os.kill(loop, signal.SIGKILL)
        killed.wait(timeout=10)
        self.assertIn(f"{loop}.{PID_NS}.sock", sockets_in(sockets), "SIGKILL left it")
        # what is not ours to remove: a dead pid's socket of another user, one someone
        # listens on, one of another PID namespace (whose pids we cannot tell)
        uid, gid = nobody()
        others = f"{dead[0]}.{PID_NS}.sock"
        made = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        made.bind(f"{sockets}/{others}")
        made.close()
        os.chown(f"{sockets}/{others}", uid, gid)
        listened = f"{dead[1]}.{PID_NS}.sock"
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(f"{sockets}/{listened}")
        listening.listen(1)
        self.addCleanup(listening.close)
        elsewhere = f"{dead[2]}.{PID_NS + 1}.sock"
        made = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        made.bind(f"{sockets}/{elsewhere}")
        made.close()
        # the next process to make its socket
        launcher = subprocess.Popen([LAUNCHER, "run", "--paused", "-o", tempfile.mkdtemp(), "--",
                                     LOOP], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        try:
            following = controlled_child(launcher.pid)
            self.assertEqual(ctl(following, "status", env=env).returncode, 0)
            wait_for(lambda: f"{loop}.{PID_NS}.sock" not in sockets_in(sockets),
                     "the removal of the killed loop's socket", seconds=5)
            self.assertEqual(sockets_in(sockets), sorted([
                f"{following}.{PID_NS}.sock", others, listened, elsewhere]))
        finally:
            launcher.send_signal(signal.SIGTERM)
            launcher.wait(timeout=10)


class Setting(unittest.TestCase):
    def test_an_empty_or_relative_control_directory_is_told_once_and_the_default_used(self):
        default = f"/tmp/profinject-{os.geteuid()}"
        for value, why in (("", "empty"), ("relative/dir", "not an absolute path")):
            with self.subTest(value=value):
                cwd = tempfile.mkdtemp()
                env = dict(os.environ, PROFINJECT_CONTROL_DIR=value)
                expected = (f"profinject: PROFINJECT_CONTROL_DIR={value} is {why}; using "
                            f"{default}")
                # a tree of three processes (sh, two programs that live past 100 ms): one line
                run = subprocess.run([LAUNCHER, "run", "-o", tempfile.mkdtemp(), "--", "sh", "-c",
                                      "sleep 0.2; sleep 0.2"], env=env, cwd=cwd,
                                     capture_output=True, text=True, timeout=60)
                self.assertEqual(run.returncode, 0, run.stderr)
                told = [line for line in run.stderr.splitlines() if "CONTROL_DIR" in line]
                self.assertEqual(len(told), 1, run.stderr)
                self.assertTrue(told[0].startswith(expected), told)
                self.assertEqual(os.listdir(cwd), [], "nothing made in the working directory")
                # and control works there, as ctl reads the same setting the same way
                launcher = subprocess.Popen([LAUNCHER, "run", "--paused", "-o",
                                             tempfile.mkdtemp(), "--", LOOP], env=env, cwd=cwd,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                try:
                    loop = controlled_child(launcher.pid)
                    answer = ctl(loop, "status", env=env)
                    self.assertEqual(answer.returncode, 0, answer.stderr)
                    self.assertIn(expected.encode(), answer.stderr)
                    self.assertIn(f"{loop}.{PID_NS}.sock", sockets_in(default))
                finally:
                    launcher.send_signal(signal.SIGTERM)
                    launcher.wait(timeout=10)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
