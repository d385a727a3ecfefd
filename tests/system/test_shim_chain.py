#!/usr/bin/env python3
"""A job started through a chain of shims, as users start it: pyenv's
`python3` shim (bash scripts that exec env, bash and finally the
interpreter, and run a few dozen short helper processes on the way). The
report must be about the Python image that did the work, say which image
of the exec chain each row is, and give the tree's host memory as the most
held at one moment, not a sum of peaks that never met. The job's own
figures: its pid and its peak RSS (getrusage). Run by ctest with the
build's paths in the environment."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profiled_job import run_and_report  # noqa: E402

LAUNCHER = os.environ["PI_LAUNCHER"]
JOB = """
import json, os, resource, sys, time
block = bytearray(80 << 20)  # 80 MiB touched
for i in range(0, len(block), 4096):
    block[i] = 1
time.sleep(0.3)
json.dump({"pid": os.getpid(), "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024},
          open(sys.argv[1], "w"))
"""


def pyenv_shim():
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    shim = os.path.join(root, "shims", "python3")
    return shim if os.access(shim, os.X_OK) else None


class ShimChain(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.shim = pyenv_shim()
        if not cls.shim:
            raise unittest.SkipTest("no pyenv shim here")
        work = tempfile.mkdtemp(prefix="pi-shim-")
        truth = os.path.join(work, "job.json")
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(cls.shim) + os.pathsep + env["PATH"]
        cls.report, cls.text = run_and_report(LAUNCHER, work, [cls.shim, "-c", JOB, truth],
                                              env=env, timeout=300)
        with open(truth) as f:
            cls.job = json.load(f)

    def test_the_verdict_is_about_the_python_image(self):
        first = self.report["verdict"][0]
        self.assertEqual(first["pid"], self.job["pid"])
        self.assertIn("/python3", first["command"].split()[0])
        self.assertNotIn("bash", first["command"])

    def test_rows_say_which_image_of_the_exec_chain(self):
        images = [p for p in self.report["processes"] if p["pid"] == self.job["pid"]]
        self.assertGreater(len(images), 1, "the shim execs on the job's pid")
        table = self.text.split("MEMORY AND CPU BY PROCESS", 1)[1].splitlines()
        rows = [line for line in table if line.split()[:1] == [str(self.job["pid"])]]
        self.assertEqual(len(rows), len(images))
        for row in rows:
            self.assertRegex(row, rf"\[exec \d+/{len(images)}\] ")
        python_row = [row for row in rows if f"[exec {len(images)}/{len(images)}] " in row]
        self.assertEqual(len(python_row), 1)
        self.assertIn("/python3", python_row[0])

    def test_host_memory_is_the_peak_at_one_moment(self):
        host = self.report["host_memory"]["rss_peak_bytes"]
        peaks = [p["memory"]["rss_peak_bytes"] for p in self.report["processes"]]
        self.assertGreater(len(peaks), 10, "the shims' helper processes are traced too")
        # what the job held by its own account, sampled every 50 ms: close below it
        self.assertLessEqual(host, self.job["maxrss"] * 1.05 + (8 << 20))
        self.assertGreaterEqual(host, self.job["maxrss"] * 0.8)
        self.assertGreater(sum(peaks), host + (8 << 20), "a sum of peaks would overstate it")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
