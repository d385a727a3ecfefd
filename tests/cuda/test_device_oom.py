#!/usr/bin/env python3
"""Out of device memory, against the test double (tests/fake_cuda) with a
1 GiB device: the failed request, where it was asked for, what the process
held and what the device had, and whether it died, against the program's
own account (its count of what it kept, the driver's cuMemGetInfo).

Run by ctest with the build's paths in the environment."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
FAKE_CUDA = os.environ["PI_FAKE_CUDA"]
SOURCE = os.environ["PI_SOURCE"]
PROGRAM = os.path.join(SOURCE, "tests", "cuda_programs", "py_device_oom.py")
MiB = 1 << 20


def site_line():
    with open(PROGRAM) as f:
        return next(n for n, line in enumerate(f, 1) if "# site: request" in line)


def run(mode):
    traces = tempfile.mkdtemp()
    env = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces, FAKE_CUDA_DEVICE_MB="1024",
               LD_LIBRARY_PATH=FAKE_CUDA)
    job = subprocess.run([sys.executable, PROGRAM, os.path.join(FAKE_CUDA, "libcudart.so.13"), mode],
                         env=env, capture_output=True, text=True, timeout=120)
    own = {}
    for line in job.stdout.splitlines():
        words = line.split()
        own[words[0]] = words[1:]
    out = os.path.join(traces, "report.json")
    subprocess.run([ANALYZE, traces, "--quiet", "--json", out], check=True, capture_output=True)
    with open(out) as f:
        return job, own, json.load(f)


class DeviceOutOfMemory(unittest.TestCase):
    def check_request(self, finding, own):
        evidence = finding["evidence"]
        kept, request = int(own["kept"][0]), int(own["request"][0])
        free, total = (int(v) for v in own["device"])
        self.assertEqual(finding["cause"], "device-out-of-memory", finding)
        self.assertEqual(evidence["request_mib"], request / MiB)
        self.assertEqual(evidence["held_mib"], kept * request / MiB)
        self.assertEqual(evidence["device_total_mib"], total / MiB)
        self.assertAlmostEqual(evidence["device_free_mib"], free / MiB, delta=0.5)
        self.assertIn(f"py_device_oom.py:{site_line()}", finding["summary"])

    def test_a_process_that_died_of_it(self):
        job, own, report = run("die")
        self.assertEqual(job.returncode, 1)
        self.assertIn("MemoryError", job.stderr)
        first = report["verdict"][0]
        self.assertEqual(first["kind"], "died", first)
        self.check_request(first, own)
        self.assertEqual(first["evidence"]["exit_status"], 1)
        self.assertNotIn("freed_before_retry_mib", first["evidence"])

    def test_a_process_that_freed_and_asked_again(self):
        job, own, report = run("retry")
        self.assertEqual((job.returncode, own["retry"]), (0, ["ok"]), job.stderr)
        first = report["verdict"][0]
        self.assertEqual(first["kind"], "device-out-of-memory", first)
        self.check_request(first, own)
        freed = int(own["kept"][0]) // 2 * int(own["request"][0]) / MiB
        self.assertEqual(first["evidence"]["freed_before_retry_mib"], freed)
        self.assertIn("that worked", first["summary"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
