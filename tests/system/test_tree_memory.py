#!/usr/bin/env python3
"""The host memory of a process tree whose processes share their pages, as
a DataLoader's workers share the interpreter and the model with the
training process: a parent touches 200 MiB, then forks three children that
keep those pages shared and sleep. Each process's RSS counts the 200 MiB,
so the processes' RSS add up to about four times what the tree holds; their
PSS (each page divided among the processes that map it) add up to what it
holds. The job reads every process's Pss and Rss from
/proc/PID/smaps_rollup itself while all four are alive, and the report's
peak for the tree must be within 10% of the Pss added up, and say it is
PSS, while each process keeps its RSS. Old traces (format 1, the H100
fixtures) have no PSS: their report says the figure is RSS, as before. Run
by ctest with the build's paths in the environment."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profiled_job import run_and_report  # noqa: E402

LAUNCHER = os.environ["PI_LAUNCHER"]
SOURCE = os.environ.get("PI_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MIB = 1 << 20
JOB = """
import json, os, sys, time

def rollup(pid):
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                fields[name] = int(rest.split()[0]) * 1024
    return {"pss": fields["Pss"], "rss": fields["Rss"]}

block = bytearray(200 << 20)
block[::4096] = b"\\1" * len(range(0, len(block), 4096))  # every page touched
go_r, go_w = os.pipe()
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:  # keep the pages shared: read none of them, write none
        os.close(go_w)
        os.read(go_r, 1)
        os._exit(0)
    children.append(pid)
# every process reads its PSS at most once a second, and a 200 MiB one
# every 2-5 s (a read costs it 4-10 ms): time for each to read it again
# after the last fork, before and after the truth is taken
time.sleep(3)
truth = {pid: rollup(pid) for pid in [os.getpid()] + children}
time.sleep(5)
os.close(go_w)
for pid in children:
    os.waitpid(pid, 0)
json.dump({"parent": os.getpid(), "children": children,
           "rollup": {str(pid): v for pid, v in truth.items()}}, open(sys.argv[1], "w"))
"""


class TreeMemory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        work = cls.work = tempfile.mkdtemp(prefix="pi-tree-memory-")
        truth = os.path.join(work, "truth.json")
        cls.report, cls.text = run_and_report(LAUNCHER, work, [sys.executable, "-c", JOB, truth],
                                              timeout=300)
        with open(truth) as f:
            cls.truth = json.load(f)
        cls.pss_sum = sum(v["pss"] for v in cls.truth["rollup"].values())
        cls.rss_sum = sum(v["rss"] for v in cls.truth["rollup"].values())

    def test_the_truth_is_a_shared_tree(self):
        # the test's own premise: the RSS of the four count the 200 MiB four times
        self.assertGreater(self.rss_sum, 3.5 * self.pss_sum,
                           f"RSS {self.rss_sum / MIB:.0f} MiB, PSS {self.pss_sum / MIB:.0f} MiB")
        self.assertGreater(self.pss_sum, 200 * MIB)

    def test_the_trees_peak_is_its_pss(self):
        host = self.report["host_memory"]
        # the tree's figure as the report gives it; before PSS, its RSS added up
        peak = host.get("pss_peak_bytes", host["rss_peak_bytes"])
        self.assertLess(abs(peak - self.pss_sum), 0.1 * self.pss_sum,
                        f"report {peak / MIB:.1f} MiB, smaps_rollup Pss added up "
                        f"{self.pss_sum / MIB:.1f} MiB")
        self.assertEqual(host.get("peak_figure"), "pss")
        self.assertEqual(host["pss_processes_alive"], 4)
        self.assertEqual(host["pss_processes_unread"], 0)

    def test_the_rss_added_up_is_still_there_and_four_times_more(self):
        host = self.report["host_memory"]
        self.assertGreater(host["rss_peak_bytes"], 3.5 * self.pss_sum)
        self.assertLess(abs(host["rss_peak_bytes"] - self.rss_sum), 0.1 * self.rss_sum)

    def test_each_process_keeps_its_rss(self):
        by_pid = {p["pid"]: p for p in self.report["processes"]}
        for pid, truth in self.truth["rollup"].items():
            memory = by_pid[int(pid)]["memory"]
            self.assertLess(abs(memory["rss_peak_bytes"] - truth["rss"]), 0.1 * truth["rss"],
                            f"pid {pid}: report {memory['rss_peak_bytes'] / MIB:.1f} MiB, "
                            f"smaps_rollup Rss {truth['rss'] / MIB:.1f} MiB")
            self.assertGreater(len(memory["pss_samples"]), 0)

    def test_the_text_says_which_figure(self):
        key = re.search(r"peak memory .* host ([\d.]+ \w+) \((\w+) of the tree\)", self.text)
        self.assertIsNotNone(key, self.text[:2000])
        self.assertEqual(key.group(2), "PSS")
        self.assertIn("of PSS at", self.text)
        self.assertIn("their RSS added up", self.text)

    def test_the_dump_shows_each_pss_read_on_its_line(self):
        """dump writes a PSS record's figures on its own line, never amid another record's
        (a PSS line's figures once went out through another stream than the rest)."""
        traces = os.path.join(self.work, "traces")
        lines = []
        for name in os.listdir(traces):
            lines += subprocess.run([LAUNCHER, "analyze", "dump", os.path.join(traces, name)],
                                    check=True, capture_output=True, text=True).stdout.splitlines()
        reads = [line for line in lines if " proc_pss" in line]
        self.assertTrue(reads, "the job lived long enough to read its PSS")
        for line in reads:
            self.assertRegex(line, r"^\d+ \+[\d.]+ tid=\d+ proc_pss pss_bytes=\d+ rss_bytes=\d+ "
                                   r"read_cpu_ns=\d+$")
        self.assertEqual([line for line in lines if "pss_bytes=" in line and " proc_pss" not in line],
                         [], "no figures of a PSS read on another record's line")

    def test_old_traces_say_rss_as_before(self):
        traces = os.path.join(SOURCE, "tests", "analyzer", "fixtures", "h100", "train-nopin")
        work = tempfile.mkdtemp(prefix="pi-tree-memory-old-")
        path = os.path.join(work, "report.json")
        text = subprocess.run([LAUNCHER, "analyze", traces, "--json", path], check=True,
                              capture_output=True, text=True).stdout
        with open(path) as f:
            host = json.load(f)["host_memory"]
        self.assertEqual(sorted(host), ["processes_alive", "rss_peak_at_ns", "rss_peak_bytes"])
        self.assertIn("(RSS of the tree)", text)
        self.assertIn("(from the RSS samples; per process below)", text)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
