#!/usr/bin/env python3
"""Containers made as a container runtime makes them, without one: a Debian
root file system (tools/setup --containers), chroot, and new mount, PID,
network and user namespaces (unshare). Checked:
(a) `profinject attach` from the host into a process in there, while it
    reads a file: a report with its I/O and both its pids, its output and
    exit status as without the profiler, the same figures as attaching to
    a host process doing the same work;
(b) LD_PRELOAD inside, the library mounted read-only: one trace per
    process of the tree, analysed on the host; a non-root user on a
    read-only root writes its traces to the output volume, or, without one,
    to /tmp with a message saying so;
(c) after detach, no file of ours in the container, and the host folder
    handed to the process leads nowhere else;
(d) `profinject stacks` and `top` from the host, for a job under LD_PRELOAD
    in there: its Python thread on its line, its thread that runs no Python
    in a function of a library only the container has, its resident memory
    as the kernel counts it, and the job unharmed;
and that what cannot be attached to is named: musl, a static program, a
seccomp filter refusing memfd_create, no right to trace.
Needs root (namespaces, mounts, chroot, ptrace): without it each test fails
and says so, never passes for nothing."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

LAUNCHER = os.environ["PI_LAUNCHER"]
ANALYZE = os.environ["PI_ANALYZE"]
LIBRARY = os.environ["PI_LIBRARY"]
ROOT = os.environ["PI_CONTAINER_ROOT"]
PROGRAMS = os.environ["PI_PROGRAMS"]
PAUSE_HERE = os.environ["PI_PAUSE_HERE"]
DATA_BYTES = 4096
# the opens of the workload attached to: one every ~1 ms
ATTACHED_OPENS = 6000

READER = """import sys, time
path, n = sys.argv[1], int(sys.argv[2])
print("started", flush=True)
total = 0
for i in range(n):
    with open(path, "rb") as f:
        total += len(f.read())
    time.sleep(0.001)
print("read", total, "bytes in", n, "opens", flush=True)
"""

# a Python thread asleep on a known line, a thread that runs no Python in
# /tmp/libpause_here.so, 64 MiB made resident; it says when all are there
LIVE_JOB = """import ctypes, os, threading, time
def sleeper():
    while True:
        time.sleep(0.05)  # asleep here
threading.Thread(target=sleeper, name="sleeper", daemon=True).start()
assert ctypes.CDLL("/tmp/libpause_here.so").start_pausing_thread() == 0
held = bytearray(64 << 20)
for i in range(0, len(held), 4096):
    held[i] = 1
print("ready", flush=True)
time.sleep(120)
"""

# two forked children and one exec'd: the pids each process saw, sorted
FAMILY = """import os, subprocess, sys
pids = [os.getpid()]
for _ in range(2):
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        with open("/tmp/data.bin", "rb") as f:
            f.read()
        os.write(w, str(os.getpid()).encode())
        os._exit(0)
    os.close(w)
    pids.append(int(os.read(r, 32)))
    os.waitpid(child, 0)
out = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                     capture_output=True, text=True, check=True).stdout
pids.append(int(out))
print(" ".join(map(str, sorted(pids))))
"""


def check_privileges():
    """Why containers cannot be made here, or None."""
    if os.geteuid() != 0:
        return "making containers (mount, chroot, namespaces) needs root"
    if not os.path.exists(os.path.join(ROOT, ".profinject-root")):
        return f"no container root file system in {ROOT}: run tools/setup --containers"
    probe = subprocess.run(["unshare", "--mount", "--pid", "--net", "--fork", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return "unshare --mount --pid --net failed: " + probe.stderr.strip()
    return None


def workdir():
    """A host folder that is the container's /tmp, with the workloads and
    DATA_BYTES of data; writable by every user, as /tmp is."""
    tmp = tempfile.mkdtemp()
    os.chmod(tmp, 0o1777)
    with open(os.path.join(tmp, "data.bin"), "wb") as f:
        f.write(os.urandom(DATA_BYTES))
    for name, text in (("reader.py", READER), ("family.py", FAMILY), ("live.py", LIVE_JOB)):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    return tmp


def container(argv, tmp, *, net=False, user=False, read_only=False, uid=None, out=None,
              library=False, env=(), cwd="/"):
    """Popen of @argv in a container: mount and PID namespaces (+ network,
    + user), the Debian root (read-only if asked), /proc of its own, @tmp as
    its /tmp, @out as /out, the library's folder read-only at /opt/profinject."""
    mounts = []
    if read_only:
        mounts += [f"mount --bind {ROOT} {ROOT}", f"mount -o remount,bind,ro {ROOT}"]
    mounts += [f"mount -t proc proc {ROOT}/proc", f"mount --bind {tmp} {ROOT}/tmp"]
    if library:
        folder = os.path.dirname(LIBRARY)
        mounts += [f"mount --bind {folder} {ROOT}/opt/profinject",
                   f"mount -o remount,bind,ro {ROOT}/opt/profinject"]
    if out:
        mounts += [f"mount --bind {out} {ROOT}/out"]
    userspec = [f"--userspec={uid}:{uid}"] if uid is not None else []
    inside = ["chroot", *userspec, ROOT, "env", "-i", "-C", cwd, "PATH=/usr/bin:/bin", *env,
              *argv]
    script = " && ".join(mounts + ["exec " + shlex.join(inside)])
    namespaces = ["--mount", "--pid", "--fork"] + (["--net"] if net else []) + \
                 (["--user", "--map-root-user"] if user else [])
    return subprocess.Popen(["unshare", *namespaces, "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def children_of(pid):
    """The host pids of @pid's children."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(child) for child in f.read().split()]


def host_pid_of(unshare_pid):
    """The pid the host sees for pid 1 of the container unshare started."""
    for _ in range(500):
        children = children_of(unshare_pid)
        if children:
            return children[0]
        time.sleep(0.01)
    raise AssertionError("the container did not start")


def workload_state(job, pid):
    """What a failed attach found: whether the workload still ran, what its
    container's first process was then, and what it said if it had ended."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            seen = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError as e:
        seen = f"gone ({e.strerror})"
    try:
        children = " ".join(map(str, children_of(job.pid))) or "none"
    except OSError:
        children = "unshare gone"
    state = f"\nhost pid {pid}: {seen}; unshare's children now: {children}"
    if job.poll() is not None:
        state += f"; the container ended with {job.returncode}: {job.stderr.read()}"
    return state


def files_of(folder, skip=()):
    """Every path under @folder (not under @skip), with its size and time."""
    found = set()
    for top, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in skip]
        for name in dirs + names:
            path = os.path.join(top, name)
            st = os.lstat(path)
            found.add((path, st.st_size, st.st_mtime_ns))
    return found


def container_files(tmp):
    skip = {os.path.join(ROOT, d) for d in ("proc", "tmp", "opt/profinject", "out")}
    return files_of(ROOT, skip) | files_of(tmp)


def report(traces):
    path = os.path.join(tempfile.mkdtemp(), "report.json")
    done = subprocess.run([ANALYZE, traces, "--quiet", "--json", path], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    with open(path) as f:
        return json.load(f)


def data_file_row(r, path):
    rows = [row for row in r["files"] if row["path"] == path]
    if len(rows) != 1:
        raise AssertionError(f"{path} not in the files of the report: {r['files']}")
    return rows[0]


class Containers(unittest.TestCase):
    def setUp(self):
        why = check_privileges()
        if why:
            self.fail(why)  # a container test that cannot run is a failure, not a pass

    def attach_into_container(self, **namespaces):
        tmp = workdir()
        # ~6 s of work: the attach (slower the first time on a busy machine) and its 1 s
        # window must find it running, and it must still run after the detach
        argv = ["python3", "/tmp/reader.py", "/tmp/data.bin", str(ATTACHED_OPENS)]
        plain = container(argv, tmp, **namespaces)
        plain_out, plain_err = plain.communicate(timeout=120)
        self.assertEqual(plain.returncode, 0, plain_err)

        out = tempfile.mkdtemp()
        # the container's files before the workload starts (it makes none: the plain run
        # made what it would): walking the root file system can take longer than the
        # workload runs on a busy machine, and the attach must find it running
        before = container_files(tmp)
        job = container(argv, tmp, **namespaces)
        try:
            self.assertEqual(job.stdout.readline(), "started\n", "the workload started")
            pid = host_pid_of(job.pid)
            attached = subprocess.run([LAUNCHER, "attach", str(pid), "-o", out, "--duration",
                                       "1s"], capture_output=True, text=True, timeout=60)
            self.assertEqual(attached.returncode, 0, attached.stderr + workload_state(job, pid))
            self.assertIn(f"traces go to {out}", attached.stdout)
            self.assertIn("detached", attached.stdout)
            # (c) nothing of ours in the container: no library copy, no socket, no trace
            self.assertEqual(container_files(tmp) ^ before, set(), "files left in the container")
            self.assert_output_directory_is_no_way_out(pid, out)
            rest, errors = job.communicate(timeout=120)
        finally:
            job.kill()
            job.wait()
        self.assertEqual(job.returncode, plain.returncode)
        self.assertEqual("started\n" + rest, plain_out, "its output as without the profiler")

        r = report(out)
        [process] = r["processes"]
        self.assertEqual(process["pid"], 1, "the pid it saw itself")
        self.assertEqual(process["outer_pid"], pid, "the pid the host saw")
        row = data_file_row(r, "/tmp/data.bin")
        self.assertGreater(row["opens"], 100, "one open every ~1 ms for 1 s")
        self.assert_each_open_read_the_file(row)
        text = subprocess.run([ANALYZE, out], capture_output=True, text=True).stdout
        self.assertIn(f"pid 1 is {pid} on the host", text)
        return row

    def assert_each_open_read_the_file(self, row):
        """Each open read the whole file (its size) in two reads (the second
        finds its end) and was closed: 4 calls. The window may cut one open's
        calls at either edge."""
        self.assertLessEqual(abs(row["bytes"] - row["opens"] * DATA_BYTES), DATA_BYTES, row)
        self.assertLessEqual(abs(row["count"] - row["opens"] * 4), 4, row)

    def assert_output_directory_is_no_way_out(self, pid, out):
        """The descriptor of the host's output directory that the process holds
        leads nowhere else: its ".." is itself, not the host's /tmp."""
        target = os.stat(out)
        held = []
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
                held.append(fd)
        self.assertEqual(len(held), 1, "the process holds the output directory once")
        self.assertNotEqual(sorted(os.listdir(os.path.dirname(out))), sorted(os.listdir(out)))
        self.assertEqual(sorted(os.listdir(f"/proc/{pid}/fd/{held[0]}/..")),
                         sorted(os.listdir(out)), "'..' of the handed-over directory")

    def test_attach_into_mount_and_pid_namespaces(self):
        in_container = self.attach_into_container()
        # the same work on the host, attached the same way: the same figures
        tmp = workdir()
        out = tempfile.mkdtemp()
        job = subprocess.Popen([sys.executable, os.path.join(tmp, "reader.py"),
                                os.path.join(tmp, "data.bin"), str(ATTACHED_OPENS)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(job.stdout.readline(), "started\n")
            attached = subprocess.run([LAUNCHER, "attach", str(job.pid), "-o", out,
                                       "--duration", "1s"], capture_output=True, text=True,
                                      timeout=60)
            self.assertEqual(attached.returncode, 0, attached.stderr)
            job.communicate(timeout=120)
        finally:
            job.kill()
            job.wait()
        on_host = data_file_row(report(out), os.path.join(tmp, "data.bin"))
        self.assert_each_open_read_the_file(on_host)
        self.assertGreater(on_host["opens"], 100)

    def test_attach_into_a_container_with_its_own_network(self):
        self.attach_into_container(net=True)

    def test_attach_into_a_user_namespace(self):
        self.attach_into_container(net=True, user=True)

    def test_attach_into_a_process_that_went_away_is_a_clear_error(self):
        refused = subprocess.run([LAUNCHER, "attach", "999999999", "-o", tempfile.mkdtemp()],
                                 capture_output=True, text=True, timeout=30)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("no process 999999999", refused.stderr)

    def family_in_container(self, **options):
        """FAMILY under LD_PRELOAD in a container: the pids it printed, the
        report of the traces in @options['out'] (or in the fallback folder), stderr."""
        tmp = workdir()
        env = ["LD_PRELOAD=/opt/profinject/" + os.path.basename(LIBRARY)]
        env += [f"PROFINJECT_OUTPUT={options.pop('output')}"] if "output" in options else []
        job = container(["python3", "/tmp/family.py"], tmp, library=True, env=env, **options)
        stdout, stderr = job.communicate(timeout=120)
        self.assertEqual(job.returncode, 0, stderr)
        return tmp, sorted(map(int, stdout.split())), stderr

    def test_preload_inside_one_trace_per_process(self):
        out = tempfile.mkdtemp()
        tmp, pids, _ = self.family_in_container(out=out, output="/out")
        traced = sorted(p["pid"] for p in report(out)["processes"])
        self.assertEqual(len(os.listdir(out)), len(pids), "one trace file per process")
        self.assertEqual(traced, pids, "the pids the processes saw themselves")

    def test_ctl_from_the_host_opens_a_window_in_a_container(self):
        # recording under LD_PRELOAD in a container with its own network, paused:
        # its control socket is a file of the container, reached through its root
        tmp, out = workdir(), tempfile.mkdtemp()
        env = ["LD_PRELOAD=/opt/profinject/" + os.path.basename(LIBRARY),
               "PROFINJECT_OUTPUT=/out", "PROFINJECT_PAUSED=1"]
        job = container(["python3", "/tmp/reader.py", "/tmp/data.bin", "2500"], tmp, net=True,
                        library=True, out=out, env=env)
        try:
            self.assertEqual(job.stdout.readline(), "started\n", "the workload started")
            pid = host_pid_of(job.pid)
            for _ in range(200):  # its control thread is up once the socket is listed
                with open(f"/proc/{pid}/net/unix") as f:
                    if ".sock" in f.read():
                        break
                time.sleep(0.01)
            started = subprocess.run([LAUNCHER, "ctl", str(pid), "start"], capture_output=True,
                                     text=True, timeout=30)
            time.sleep(0.5)
            stopped = subprocess.run([LAUNCHER, "ctl", str(pid), "stop"], capture_output=True,
                                     text=True, timeout=30)
            job.communicate(timeout=120)
        finally:
            job.kill()
            job.wait()
        self.assertEqual(started.returncode, 0, started.stderr)
        # it says which process it reached: the host's pid, then the pid inside
        self.assertTrue(started.stdout.startswith(f"{pid}: recording 1 /out/"), started.stdout)
        self.assertTrue(stopped.stdout.startswith(f"{pid}: paused 1 "), stopped.stdout)
        [process] = report(out)["processes"]
        self.assertEqual(len(process["windows"]), 1, "one window, opened and closed")
        self.assertGreater(data_file_row(report(out), "/tmp/data.bin")["opens"], 100)

    def test_stacks_and_top_from_the_host(self):
        tmp, out = workdir(), tempfile.mkdtemp()
        shutil.copy(PAUSE_HERE, os.path.join(tmp, "libpause_here.so"))
        env = ["LD_PRELOAD=/opt/profinject/" + os.path.basename(LIBRARY), "PROFINJECT_OUTPUT=/out"]
        job = container(["python3", "/tmp/live.py"], tmp, net=True, library=True, out=out,
                        env=env)
        try:
            self.assertEqual(job.stdout.readline(), "ready\n", "the workload started")
            pid = host_pid_of(job.pid)
            time.sleep(0.5)  # its control socket is made at its first flush
            stacks = subprocess.run([LAUNCHER, "stacks", str(pid)], capture_output=True,
                                    text=True, timeout=60)
            top = subprocess.run([LAUNCHER, "top", "--once", "--json", "--interval", "500ms",
                                  str(pid)], capture_output=True, text=True, timeout=60)
            with open(f"/proc/{pid}/status") as f:
                rss_kib = int(next(line for line in f if line.startswith("VmRSS:")).split()[1])
            host_tids = os.listdir(f"/proc/{pid}/task")
            self.assertIsNone(job.poll(), "the job runs on")
        finally:
            job.kill()
            job.wait()
        self.assertEqual(stacks.returncode, 0, stacks.stderr)
        line = LIVE_JOB.splitlines().index("        time.sleep(0.05)  # asleep here") + 1
        self.assertRegex(stacks.stdout, rf"thread sleeper \(tid \d+\):\n      /tmp/live.py:{line} "
                                        r"in sleeper\n")
        # the library exists at /tmp/libpause_here.so in the container only
        self.assertFalse(os.path.exists("/tmp/libpause_here.so"))
        # its threads as it numbers them, and as the host does
        native = re.search(r"thread native-pause \(tid \d+; (\d+) from here\), stopped [\d.]+ ms, "
                           r"native frames:\n((?:      .*\n)+)", stacks.stdout)
        self.assertIsNotNone(native, stacks.stdout)
        self.assertIn(native.group(1), host_tids, "the host's number of the thread")
        # only that thread: not its Python threads, not the profiler's
        self.assertEqual(len(re.findall(r"native frames:\n", stacks.stdout)), 1, stacks.stdout)
        frames = [frame.strip() for frame in native.group(2).splitlines()]
        self.assertRegex(frames[0], r"^pause\+0x[0-9a-f]+ \(libc\.so\.6\)$")
        self.assertRegex(frames[1], r"^pause_here\+0x[0-9a-f]+ \(libpause_here\.so\)$")
        self.assertEqual(top.returncode, 0, top.stderr)
        [process] = json.loads(top.stdout)
        self.assertEqual(process["pid"], pid, "top names the process by the host's pid")
        self.assertAlmostEqual(process["rss_mib"], rss_kib / 1024, delta=0.1 * rss_kib / 1024)

    def test_non_root_user_on_a_read_only_root_writes_to_the_volume(self):
        out = tempfile.mkdtemp()
        os.chmod(out, 0o777)
        _, pids, stderr = self.family_in_container(out=out, output="/out", read_only=True,
                                                   uid=65534, net=True)
        self.assertEqual(sorted(p["pid"] for p in report(out)["processes"]), pids)
        for name in os.listdir(out):
            self.assertEqual(os.stat(os.path.join(out, name)).st_uid, 65534)

    def test_read_only_root_without_a_volume_falls_back_to_tmp(self):
        # the working directory / cannot be written: the traces go to /tmp, and it says so
        tmp, pids, stderr = self.family_in_container(read_only=True, uid=65534)
        fallback = "/tmp/profinject-traces-65534"
        self.assertIn(f"they go to {fallback} instead", stderr)
        self.assertLessEqual(stderr.count("they go to"), len(pids), "told at most once a process")
        traces = os.path.join(tmp, "profinject-traces-65534")
        self.assertEqual(sorted(p["pid"] for p in report(traces)["processes"]), pids)


class AttachErrors(unittest.TestCase):
    """What cannot work is said plainly, and the process runs on as before."""

    def refused(self, job, expected):
        try:
            self.assertEqual(job.stdout.readline(), "started\n")
            pid = job.pid if job.args[0] != "unshare" else host_pid_of(job.pid)
            attached = subprocess.run([LAUNCHER, "attach", str(pid), "-o", tempfile.mkdtemp()],
                                      capture_output=True, text=True, timeout=60)
            rest, _ = job.communicate(timeout=60)
        finally:
            job.kill()
            job.wait()
        self.assertEqual(attached.returncode, 2, attached.stderr)
        self.assertIn(expected, attached.stderr)
        self.assertEqual((rest, job.returncode), ("done\n", 0), "the process ran on untouched")
        return attached.stderr

    def waiter(self, name, *args):
        return subprocess.Popen([os.path.join(PROGRAMS, name), "1.5", *args],
                                stdout=subprocess.PIPE, text=True)

    def test_musl_is_named(self):
        program = os.path.join(PROGRAMS, "prog_waiter_musl")
        if not os.path.exists(program):
            self.fail("prog_waiter_musl was not built: musl-gcc is missing (tools/setup installs "
                      "musl-tools)")
        said = self.refused(self.waiter("prog_waiter_musl"), "runs on musl libc")
        self.assertIn("glibc 2.28 or newer", said)

    def test_a_static_program_is_named(self):
        self.refused(self.waiter("prog_waiter_static"), "has no C library loaded")

    def test_seccomp_refusing_memfd_is_named(self):
        why = check_privileges()
        if why:
            self.fail(why)
        tmp = workdir()
        shutil.copy(os.path.join(PROGRAMS, "prog_waiter"), tmp)
        job = container(["/tmp/prog_waiter", "1.5", "no-memfd"], tmp)
        self.refused(job, "its seccomp filter refuses it")

    def test_no_right_to_trace_names_the_capability(self):
        if os.geteuid() != 0:
            self.fail("needs root to run the launcher as another user")
        job = self.waiter("prog_waiter")
        try:
            self.assertEqual(job.stdout.readline(), "started\n")
            refused = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup",
                                      "--clear-groups", LAUNCHER, "attach", str(job.pid), "-o",
                                      tempfile.mkdtemp()], capture_output=True, text=True,
                                     timeout=60)
            rest, _ = job.communicate(timeout=60)
        finally:
            job.kill()
            job.wait()
        self.assertEqual(refused.returncode, 2)
        self.assertIn("CAP_SYS_PTRACE", refused.stderr)
        self.assertIn("ptrace_scope", refused.stderr)
        self.assertEqual(rest, "done\n")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
