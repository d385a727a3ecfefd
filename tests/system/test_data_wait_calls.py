#!/usr/bin/env python3
"""Every call that takes a sender's bytes on the training loop's thread is a
data wait with its Python line: a loop that receives its batches with
recvmmsg(2) from a forked worker (as a loader over a socket would) gets its
wait line in the report, with the time the loop measured around the calls.
And every wait recorded, however short, leaves the job running: a loop whose
queue waits are all recorded still gets their line.

The truth is the loop's own clock around each call. Run by ctest with the
build's paths in the environment."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profiled_job import run_job  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]

# The loop: a worker sends 20 messages 25 ms apart over a socket pair; the
# loop takes each with recvmmsg through libc and times its calls.
LOOP = textwrap.dedent("""
    import ctypes, json, os, socket, sys, time
    libc = ctypes.CDLL(None, use_errno=True)

    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    class msghdr(ctypes.Structure):
        _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                    ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                    ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                    ("flags", ctypes.c_int)]

    class mmsghdr(ctypes.Structure):
        _fields_ = [("hdr", msghdr), ("length", ctypes.c_uint)]

    MESSAGES = 20
    loop_end, worker_end = socket.socketpair()
    if os.fork() == 0:
        loop_end.close()
        for _ in range(MESSAGES):
            time.sleep(0.025)
            worker_end.send(b"b" * 64)
        os._exit(0)
    worker_end.close()
    buffer = ctypes.create_string_buffer(4096)
    vector = iovec(ctypes.cast(buffer, ctypes.c_void_p), 4096)
    message = mmsghdr(msghdr(None, 0, ctypes.pointer(vector), 1, None, 0, 0), 0)
    waited = 0
    for _ in range(MESSAGES):
        start = time.monotonic_ns()
        got = libc.recvmmsg(loop_end.fileno(), ctypes.byref(message), 1, 0, None)  # WAIT_LINE
        waited += time.monotonic_ns() - start
        assert got == 1 and message.length == 64, (got, ctypes.get_errno())
    os.wait()
    print(json.dumps({"waited_ns": waited, "calls": MESSAGES}))
""")


def profile_script(source, marker, timeout, **env):
    """@source written to a file and run from it under the preload (with @env), then
    analysed: its run, its JSON report, and "file:line" of the line marked @marker."""
    work = tempfile.mkdtemp()
    script = os.path.join(work, "loop.py")
    with open(script, "w") as f:
        f.write(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if marker in text)
    traces = os.path.join(work, "traces")
    job = run_job([sys.executable, script], timeout=timeout,
                  env=dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces, **env))
    assert job.returncode == 0, job.stderr
    out = os.path.join(work, "report.json")
    analysis = subprocess.run([ANALYZE, traces, "--quiet", "--json", out],
                              capture_output=True, text=True)
    assert analysis.returncode == 0, analysis.stderr
    with open(out) as f:
        return job, json.load(f), f"{script}:{line}"


class RecvmmsgIsADataWait(unittest.TestCase):
    def test_the_wait_line_and_its_time(self):
        run, report, where = profile_script(LOOP, "WAIT_LINE", 300)
        truth = json.loads(run.stdout)
        sites = [s for s in report.get("wait_sites", [])
                 if s["class"] == "data_wait" and where in s["stack"]["text"]]
        self.assertEqual(len(sites), 1, f"no data wait at {where}: {report.get('wait_sites')}")
        [site] = sites
        self.assertEqual(site["count"], truth["calls"])
        # the loop's clock includes ctypes' own work around each call
        self.assertLessEqual(site["total_ns"], truth["waited_ns"])
        self.assertGreaterEqual(site["total_ns"], 0.8 * truth["waited_ns"],
                                f"{site['total_ns']} ns against the loop's {truth['waited_ns']}")


# A script run from its file (python runs the interpreter's pending calls before its first
# line there, taking their lock in a semaphore wait) whose loop waits on a queue for a
# producer thread; it started a process, as a training loop starts its workers.
QUEUE_LOOP = textwrap.dedent("""
    import json, os, queue, threading, time
    if os.fork() == 0:
        os._exit(0)
    os.wait()
    items = queue.Queue()

    def produce():
        for i in range(20):
            time.sleep(0.01)
            items.put(i)

    threading.Thread(target=produce).start()
    for _ in range(20):
        items.get()  # GET_LINE
    print(json.dumps({"gets": 20}))
""")


class EveryWaitRecorded(unittest.TestCase):
    def test_the_job_runs_on_and_its_waits_keep_their_line(self):
        """PROFINJECT_WAIT_US=0 records every wait, the interpreter's own lock taken before
        the script's first frame included: the job ends (it hung there, asking for its frames
        on the lock it held), and the loop's queue waits, made without the GIL, still get
        the line that waited."""
        _, report, where = profile_script(QUEUE_LOOP, "GET_LINE", 60, PROFINJECT_WAIT_US="0")
        waits = sum(s["count"] for s in report.get("wait_sites", [])
                    if where in s["stack"]["text"])
        self.assertGreaterEqual(waits, 10, f"queue waits at {where}: {report.get('wait_sites')}")


if __name__ == "__main__":
    unittest.main()
