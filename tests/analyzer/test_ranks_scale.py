#!/usr/bin/env python3
"""The cross-rank analysis on a synthetic job of many ranks (tools/benchmarks/
gen_ranks.c), against what the generator planted: a straggler and its delay,
the skew of the step ends, the steps of every rank; and the analyzer's memory
as the number of ranks grows.

Run by ctest with PI_ANALYZE and PI_GEN_RANKS in the environment."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from browser import load as load_page  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
GEN_RANKS = os.environ["PI_GEN_RANKS"]
# the histograms' stated relative error (analysis/common/histogram.h)
HISTOGRAM_ERROR = 1 / 128


def generate(directory, ranks, steps, straggler, delay_ms, skew_us=2000, gpu=False, hosts=1):
    """Write the job's files; what was planted, as the generator reports it."""
    env = dict(os.environ, GEN_RANKS_GPU="1" if gpu else "0", GEN_RANKS_HOSTS=str(hosts))
    out = subprocess.run([GEN_RANKS, directory, str(ranks), str(steps), str(straggler),
                          str(delay_ms), str(skew_us)], check=True, capture_output=True, text=True,
                         env=env)
    return json.loads(out.stdout)


def ranks_report(directory):
    out = os.path.join(directory, "report.json")
    subprocess.run([ANALYZE, directory, "--quiet", "--json", out], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)["ranks"]


def peak_rss_kb(directory, jobs=1):
    """The analyzer's peak RSS over the whole run (GNU time's %M, KiB)."""
    result = subprocess.run(["/usr/bin/time", "-f", "%M", ANALYZE, "-j", str(jobs), directory,
                             "--quiet"],
                            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    return int(result.stderr.strip().splitlines()[-1])


class ManyRanks(unittest.TestCase):
    RANKS, STEPS, STRAGGLER, DELAY_MS, SKEW_US = 256, 200, 137, 30, 2000

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pi-ranks-")
        cls.planted = generate(cls.dir, cls.RANKS, cls.STEPS, cls.STRAGGLER, cls.DELAY_MS,
                               cls.SKEW_US)
        cls.ranks = ranks_report(cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_every_rank_is_seen_with_all_its_steps(self):
        self.assertEqual(self.ranks["count"], self.RANKS)
        self.assertEqual(self.ranks["world_size"], self.RANKS)
        self.assertEqual(sorted(e["rank"] for e in self.ranks["list"]), list(range(self.RANKS)))
        self.assertEqual({e["steps"] for e in self.ranks["list"]}, {self.STEPS})
        self.assertEqual(self.ranks["left_out_processes"], 0)

    def test_the_planted_straggler_and_its_delay(self):
        straggler = self.ranks["straggler"]
        self.assertIsNotNone(straggler)
        self.assertEqual(straggler["rank"], self.STRAGGLER)
        delay = straggler["delay_p50_ns"]
        # within 10% of the planted delay...
        self.assertLess(abs(delay - self.DELAY_MS * 1e6), 0.10 * self.DELAY_MS * 1e6)
        # ...and of the median the generator computed from its own step times, within the
        # histogram's error (its jitter included)
        truth = self.planted["straggler_delay_p50_ns"]
        self.assertLess(abs(delay - truth), 2 * HISTOGRAM_ERROR * truth)

    def test_the_planted_skew_between_step_ends(self):
        skew = self.ranks["skew"]["step_end_p50_ns"]
        # the ends spread over the planted skew, plus or minus the end jitter
        bound = self.planted["end_jitter_ns"] + HISTOGRAM_ERROR * self.planted["skew_ns"]
        self.assertLess(abs(skew - self.planted["skew_ns"]), bound)
        truth = self.planted["step_end_skew_p50_ns"]
        self.assertLess(abs(skew - truth), 2 * HISTOGRAM_ERROR * truth)

    def test_the_page_of_256_ranks_stays_small_and_lists_each_rank(self):
        html = os.path.join(self.dir, "report.html")
        subprocess.run([ANALYZE, self.dir, "--quiet", "--html", html], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # a page to open, not a download: under 2 MB for 256 ranks (it holds a row per rank;
        # per-process plots keep to the few that matter)
        self.assertLess(os.path.getsize(html), 2 << 20)
        dom, console = load_page(html)
        self.assertEqual(console, [], "nothing on the browser's console")
        table = dom[dom.index('<table id="rank-table">'):]
        table = table[:table.index("</table>")]
        rows = re.findall(r"<tr><td>(\d+)( \(straggler\))?</td>", table)
        self.assertEqual(sorted(int(r) for r, _ in rows), list(range(self.RANKS)))
        self.assertEqual([int(r) for r, marked in rows if marked], [self.STRAGGLER])
        self.assertLessEqual(len(re.findall(r'<polyline class="rss"', dom)), 16)

    def test_no_straggler_when_none_was_planted(self):
        directory = tempfile.mkdtemp(prefix="pi-ranks-even-")
        try:
            generate(directory, self.RANKS, self.STEPS, -1, 0, self.SKEW_US)
            ranks = ranks_report(directory)
            self.assertEqual(ranks["count"], self.RANKS)
            self.assertIsNone(ranks["straggler"])
        finally:
            shutil.rmtree(directory)


class CausesFirst(unittest.TestCase):
    """Rank 0's collectives wait for the planted straggler (its lock waits, 23% of its life, a
    larger share than the straggler's 30 ms of a step): the straggler is the first finding
    and the waits it explains come after it."""

    def test_the_straggler_ranks_above_the_waits_behind_it(self):
        directory = tempfile.mkdtemp(prefix="pi-ranks-causes-")
        try:
            planted = generate(directory, 64, 100, 3, 30)
            out = os.path.join(directory, "report.json")
            subprocess.run([ANALYZE, directory, "--quiet", "--json", out], check=True,
                           stdout=subprocess.DEVNULL)
            with open(out) as f:
                verdict = json.load(f)["verdict"]
            kinds = [v["kind"] for v in verdict]
            self.assertEqual(kinds[0], "straggler", [v["summary"] for v in verdict])
            self.assertEqual(verdict[0]["evidence"]["rank"], planted["straggler"])
            self.assertAlmostEqual(verdict[0]["evidence"]["delay_per_step_ms"] * 1e6,
                                   planted["straggler_delay_p50_ns"],
                                   delta=0.05 * planted["delay_ns"])
            self.assertIn("lock-bound", kinds)  # the symptom is still said, after its cause
            for wait in verdict[1:]:
                if wait["kind"] in ("lock-bound", "sync-bound"):
                    self.assertIn("a wait behind the straggler finding", wait["summary"])
        finally:
            shutil.rmtree(directory)


class GpuRanks(unittest.TestCase):
    """A GPU job's collectives are NCCL kernels that wait on the GPU while the host waits
    in a stream synchronisation: the same straggler must be found from their GPU time."""

    def test_the_straggler_of_a_gpu_job(self):
        directory = tempfile.mkdtemp(prefix="pi-gpu-ranks-")
        try:
            planted = generate(directory, 16, 100, 5, 30, skew_us=2000, gpu=True)
            ranks = ranks_report(directory)
        finally:
            shutil.rmtree(directory)
        self.assertEqual(ranks["count"], 16)
        straggler = ranks["straggler"]
        self.assertIsNotNone(straggler)
        self.assertEqual(straggler["rank"], planted["straggler"])
        self.assertAlmostEqual(straggler["delay_p50_ns"] / planted["delay_ns"], 1.0, delta=0.10)
        # late by its own compute: the host's wait for the NCCL kernels is no GPU work of its own
        self.assertEqual(straggler["cause"], "CPU")
        others = [e for e in ranks["list"] if e["rank"] != planted["straggler"]]
        for e in others:
            self.assertLess(e["gpu_wait_share"], 0.01, e)
            self.assertGreater(e["collective_share"], 0.15, e)
        release = ranks["skew"]["collective_release_p50_ns"]
        self.assertAlmostEqual(release / planted["skew_ns"], 1.0, delta=0.05)


class TwoHosts(unittest.TestCase):
    """Half the ranks on a second host whose monotonic clock is an hour ahead
    (the wall clocks agree): aligned by the wall clocks, the step ends are as
    far apart as planted, not an hour."""

    def test_hosts_are_put_on_one_time_line(self):
        directory = tempfile.mkdtemp(prefix="pi-two-hosts-")
        try:
            planted = generate(directory, 16, 100, 5, 30, skew_us=2000, hosts=2)
            ranks = ranks_report(directory)
        finally:
            shutil.rmtree(directory)
        self.assertEqual(ranks["hosts"], 2)
        self.assertFalse(ranks["clocks"]["one_host"])
        skew = ranks["skew"]["step_end_p50_ns"]
        bound = planted["end_jitter_ns"] + 2 * HISTOGRAM_ERROR * planted["skew_ns"]
        self.assertAlmostEqual(skew, planted["step_end_skew_p50_ns"], delta=bound)
        self.assertEqual(ranks["straggler"]["rank"], planted["straggler"])


class MemoryFlat(unittest.TestCase):
    """Peak RSS for 16, 64 and 256 ranks of the same size. What the analyzer keeps
    per rank is the record of its process that every file gets for the
    single-process reports (struct pi_process_info, 9 KB, its RSS samples
    beside it) with its histograms, and the rank's summary (two histograms): 17 KB
    a rank measured at 1,000 steps, at -j 1 and -j 2. It was 248 KB a rank before
    the per-step figures of all ranks but one were let go (growing with the
    steps), 43 KB before the record's RSS series was sized to its samples and
    what only the page or the file's own pass reads (timelines of threads the
    page does not draw, the relay's detection) was let go. Asserted: 40 KB a
    rank, whatever the steps, read one file at a time and with 2 threads (-j 2
    holds up to 4 files in flight: a constant); the margin is for the peak's
    noise, which the 48 ranks between 16 and 64 divide little."""
    STEPS = 1000
    PER_RANK_KB = 40

    def test_peak_rss_per_rank(self):
        if os.environ.get("PI_SANITIZE"):
            self.skipTest("under AddressSanitizer the RSS holds its shadow memory and the freed "
                          "blocks it keeps in quarantine; measured in the plain build")
        rss = {1: {}, 2: {}}
        for ranks in (16, 64, 256):
            directory = tempfile.mkdtemp(prefix="pi-ranks-rss-")
            try:
                generate(directory, ranks, self.STEPS, 3, 30)
                for jobs in rss:
                    rss[jobs][ranks] = peak_rss_kb(directory, jobs)
            finally:
                shutil.rmtree(directory)
        for jobs, by_ranks in rss.items():
            for ranks in (64, 256):
                per_rank = (by_ranks[ranks] - by_ranks[16]) / (ranks - 16)
                self.assertLess(per_rank, self.PER_RANK_KB,
                                f"peak RSS by ranks at -j {jobs}: {by_ranks}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
