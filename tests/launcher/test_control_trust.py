#!/usr/bin/env python3
"""What the control channel trusts. `profinject ctl` talks only to a socket
held by the process it was given (the kernel's SO_PEERCRED, not the socket's
name) and prints what it answers with its control characters escaped.
Another user is `nobody`, for real: a forked child that gave up root."""
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


def thread_names(pid):
    names = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return names


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


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
