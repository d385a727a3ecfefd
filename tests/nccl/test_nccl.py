#!/usr/bin/env python3
"""NCCL under the preload.

- prog_nccl against the fake libnccl.so.2 (tests/fake_nccl): the report's
  collective table, communicators and NCCL kernels outside any call must
  give back exactly the calls, counts and bytes the program says it made,
  and the GPU time the fake device's rule gives them (fake_nccl.h);
- three ranks on the fake NCCL across processes (tests/nccl/nccl_ranks.py), one of
  which skips an all-reduce: the hang verdict must name it, the collective the others
  wait for by the fake NCCL's own count of each rank's calls, and where each rank is;
- the real libnccl.so.2 of the nvidia-nccl-cu13 wheel, driven through
  ctypes (dlsym) by the CUDA venv's Python: it answers exactly as without
  the preload, and the trace holds the ncclCommInitRank that fails without
  a GPU, with the hash of the unique id it was given.

Run by ctest with the build's paths in the environment."""
import collections
import json
import os
import re
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profiled_job import analyzer_report  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
PROGRAMS = os.environ["PI_PROGRAMS"]
CUDA_PYTHON = os.environ.get("PI_CUDA_PYTHON", "")
HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 0.05  # event-pair GPU times of the fake device, as tests/cuda/test_cuda.py allows

# nccl-tests (doc/PERFORMANCE.md): bus bandwidth = algorithm bandwidth x factor(n ranks)
BUS_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
              "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n}
DATATYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
             "float64", "bfloat16", "float8e4m3", "float8e5m2"]


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def record(command, env=None):
    traces = tempfile.mkdtemp()
    environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces, **(env or {}))
    result = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120)
    return traces, result


def report(traces, flag="--json"):
    """the JSON report, the HTML page (--html) or the text report (--text: stdout)"""
    return analyzer_report(ANALYZE, traces, flag)


def dump(traces):
    return "".join(subprocess.run([ANALYZE, "dump", os.path.join(traces, name)], check=True,
                                  capture_output=True, text=True).stdout
                   for name in sorted(os.listdir(traces)))


def bucket(size):
    return 1 << (size.bit_length() - 1) if size else 0


class FakeNccl(unittest.TestCase):
    ENV = {}  # GPU times from event pairs: the fake CUPTI is not on the library path
    TIMING = "events"

    @classmethod
    def setUpClass(cls):
        cls.traces, result = record([os.path.join(PROGRAMS, "prog_nccl")], cls.ENV)
        assert result.returncode == 0, result
        cls.truth = json.loads(result.stdout)
        assert cls.truth["failures"] == 0, cls.truth
        cls.report = report(cls.traces)
        [cls.table] = cls.report["collectives"]

    def expected_rows(self):
        """(function, datatype, size bucket) -> calls, failed, bytes, GPU ns, bus/alg ratio"""
        rows = collections.defaultdict(lambda: {"calls": 0, "failed": 0, "bytes": 0, "gpu_ns": 0,
                                                 "bus_bytes": 0.0})
        group = [c for c in self.truth["calls"] if c["grouped"]]
        group_ns = sum(c["kernel_ns"] for c in group)
        for c in self.truth["calls"]:
            size = c["count"] * c["type_size"]
            if c["func"] in ("all_gather", "reduce_scatter"):
                size *= c["nranks"]
            row = rows[(c["func"], DATATYPES[c["datatype"]], bucket(size))]
            if c["failed"]:
                row["failed"] += 1
                continue
            row["calls"] += 1
            row["bytes"] += size
            # a group's one kernel runs the sum; each of its calls gets an even part
            row["gpu_ns"] += group_ns / len(group) if c["grouped"] else c["kernel_ns"]
            row["bus_bytes"] += size * BUS_FACTOR.get(c["func"], lambda n: 1)(c["nranks"])
        return rows

    def test_gpu_time_came_the_way_asked(self):
        self.assertEqual(self.report["gpu"]["timing"], self.TIMING)

    def test_the_table_is_the_calls_the_program_made(self):
        got = {(r["function"], r["datatype"], r["size_bucket"]): (r["calls"], r["failed"], r["bytes"])
               for r in self.table["table"]}
        want = {k: (v["calls"], v["failed"], v["bytes"]) for k, v in self.expected_rows().items()}
        self.assertEqual(got, want)
        calls = [c for c in self.truth["calls"] if not c["failed"]]
        self.assertEqual(self.table["calls"], len(calls))
        self.assertEqual(self.table["failed"], 1)

    def test_gpu_time_of_each_row_is_the_fake_devices(self):
        want = self.expected_rows()
        for r in self.table["table"]:
            expected = want[(r["function"], r["datatype"], r["size_bucket"])]["gpu_ns"]
            self.assertAlmostEqual(r["gpu_ns"], expected, delta=TOLERANCE * expected + 1,
                                   msg=r)

    def test_bandwidths_are_bytes_over_gpu_time_with_the_nccl_tests_factors(self):
        want = self.expected_rows()
        for r in self.table["table"]:
            if not r["gpu_ns"]:
                continue
            row = want[(r["function"], r["datatype"], r["size_bucket"])]
            self.assertAlmostEqual(r["algbw_bytes_per_s"], r["bytes"] * 1e9 / r["gpu_ns"],
                                   delta=1e-6 * r["algbw_bytes_per_s"])
            self.assertAlmostEqual(r["busbw_bytes_per_s"] / r["algbw_bytes_per_s"],
                                   row["bus_bytes"] / row["bytes"], places=9, msg=r)

    def test_the_exported_table_is_the_calls_the_program_made_in_duckdb(self):
        import duckdb
        out = tempfile.mkdtemp()
        subprocess.run([ANALYZE, self.traces, "--quiet", "--export", out, "--export-format",
                        "both"], check=True, capture_output=True,
                       env=dict(os.environ, PROFINJECT_PYTHON=sys.executable))
        # the same answers from the CSV and from the Parquet table
        for table in (f"read_csv('{out}/collectives.csv')", f"'{out}/collectives.parquet'"):
            got = {(f, d, b): (c, x, n, g) for f, d, b, c, x, n, g in duckdb.sql(
                f"select function, datatype, size_bucket, calls, failed, bytes, gpu_ns "
                f"from {table}").fetchall()}
            want = self.expected_rows()
            self.assertEqual({k: v[:3] for k, v in got.items()},
                             {k: (v["calls"], v["failed"], v["bytes"]) for k, v in want.items()},
                             table)
            for key, (_, _, _, gpu_ns) in got.items():
                expected = want[key]["gpu_ns"]
                self.assertAlmostEqual(gpu_ns, expected, delta=TOLERANCE * expected + 1,
                                       msg=(table, key))

    def test_communicators_with_the_unique_id_hash_rank_and_size(self):
        got = [(m["made_by"], m["rank"], m["nranks"], m["failed"]) for m in
               self.table["communicators"]]
        want = [(c["op"], c["rank"], c["nranks"], bool(c["failed"])) for c in self.truth["comms"]]
        self.assertEqual(got, want)
        for m, c in zip(self.table["communicators"], self.truth["comms"]):
            if not c["failed"]:
                self.assertEqual(m["hash"], c["hash"], m)
        ended = [m["ended_by"] for m in self.table["communicators"]]
        self.assertEqual(ended, ["destroy"] * 5 + ["abort", None])
        per_comm = [m["calls"] for m in self.table["communicators"]]
        self.assertEqual(per_comm, [12, 0, 0, 1, 1, 0, 0])

    def test_nccl_kernels_outside_any_call_are_collective_time_by_name(self):
        [k] = self.table["kernels_outside_calls"]
        truth = self.truth["static_kernel"]
        self.assertEqual((k["name"], k["kernels"]), (truth["name"], 1))
        self.assertAlmostEqual(k["gpu_ns"], truth["ns"], delta=TOLERANCE * truth["ns"])
        self.assertEqual(self.table["outside_gpu_ns"], k["gpu_ns"])

    def test_the_chrome_trace_has_each_call_on_its_thread(self):
        out = os.path.join(tempfile.mkdtemp(), "trace.json")
        subprocess.run([ANALYZE, self.traces, "--quiet", "--chrome-trace", out], check=True,
                       capture_output=True)
        with open(out) as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "nccl"]
        calls = [e["name"][len("nccl "):] for e in events
                 if e["name"] not in ("nccl group_start", "nccl group_end")]
        self.assertEqual(sorted(calls), sorted(c["func"] for c in self.truth["calls"]))
        self.assertEqual(sum(e["args"]["failed"] for e in events),
                         sum(1 for c in self.truth["calls"] if c["failed"]))

    def test_dump_says_reduction_peer_root_and_group(self):
        text = dump(self.traces)
        lines = re.findall(r"collective (\w+)( failed)?( grouped)? count=(\d+) datatype=(\w+) "
                           r"comm=\S+ stream=(\d+) redop=(\S+) peer=(-?\d+)", text)
        got = [(f, bool(x), bool(g), int(n), t, o, int(p)) for f, x, g, n, t, _, o, p in lines]
        self.assertIn(("all_reduce", False, False, 1000, "float16", "max", -1), got)  # dlsym
        self.assertIn(("broadcast", False, False, 4096, "int32", "-", 2), got)
        self.assertIn(("broadcast", False, False, 100, "uint8", "-", 0), got)  # ncclBcast
        self.assertIn(("reduce", False, False, 2048, "float64", "min", 3), got)
        self.assertIn(("send", False, True, 300, "float32", "-", 2), got)
        self.assertIn(("recv", False, True, 300, "float32", "-", 3), got)
        self.assertIn(("all_reduce", True, False, 64, "float32", "sum", -1), got)
        self.assertEqual([f for f, *_ in got].count("group_start"), 1)
        self.assertEqual([f for f, *_ in got].count("group_end"), 1)
        # ncclBcast reaches ncclBroadcast, ncclCommInitAll its own group and ncclCommInitRank
        # inside the library: each call once
        self.assertEqual(len(got), len(self.truth["calls"]) + 2)
        self.assertEqual(len(re.findall(r" nccl_comm ", text)), len(self.truth["comms"]) + 7)

    def test_text_and_html_reports_have_the_table(self):
        text = report(self.traces, "--text")
        self.assertRegex(text, r"COLLECTIVES \(pid \d+\): 14 calls")
        self.assertRegex(text, r"all_gather\s+bfloat16\s+512\.0 KiB\s+1\s+0")
        html = report(self.traces, "--html")
        self.assertIn('<table class="collectives">', html)
        self.assertIn("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", html)

    def test_the_program_runs_as_without_the_preload(self):
        result = subprocess.run([os.path.join(PROGRAMS, "prog_nccl")], capture_output=True,
                                text=True, timeout=60)
        self.assertEqual(result.returncode, 0)
        plain = json.loads(result.stdout)
        strip = lambda t: [{k: v for k, v in c.items() if k != "hash"} for c in t["comms"]]
        self.assertEqual((plain["calls"], strip(plain)), (self.truth["calls"], strip(self.truth)))


class FakeNcclCupti(FakeNccl):
    """The same with GPU times from the fake CUPTI: they come in batches, after the calls."""
    ENV = {"LD_LIBRARY_PATH": os.environ["PI_FAKE_CUPTI"]}
    TIMING = "cupti"


def real_libnccl():
    if not os.path.isfile(CUDA_PYTHON):
        return None, None
    site = subprocess.run([CUDA_PYTHON, "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True).stdout.strip()
    path = os.path.join(site, "nvidia", "nccl", "lib", "libnccl.so.2")
    return (CUDA_PYTHON, path) if os.path.isfile(path) else (None, None)


def line_of(path, marker):
    with open(path) as f:
        [line] = [n for n, text in enumerate(f, 1) if marker in text]
    return line


class FakeNcclHang(unittest.TestCase):
    """Three ranks of tests/nccl/nccl_ranks.py on the fake NCCL across processes: at step
    10 rank 2 skips the all-reduce and stays in its own code; the others' kernels wait for
    it on the device, and their hosts in cudaStreamSynchronize. Each rank is stopped by
    SIGTERM once every rank is where it stays. The truth: each rank's own account of where
    it went, and the fake NCCL's own count of each rank's calls on the communicator."""
    RANKS, SKIPPING, HANG_STEP = 3, 2, 10
    PROGRAM = os.path.join(HERE, "nccl_ranks.py")

    @classmethod
    def setUpClass(cls):
        work = tempfile.mkdtemp(prefix="pi-nccl-hang-")
        cls.truth_dir, rendezvous, cls.traces = (os.path.join(work, name) for name in
                                                 ("truth", "rendezvous", "traces"))
        for d in (cls.truth_dir, rendezvous):
            os.mkdir(d)
        command = [sys.executable, cls.PROGRAM, os.path.join(PROGRAMS, "fake_cuda",
                                                             "libcudart.so.13"),
                   os.path.join(PROGRAMS, "fake_nccl", "libnccl.so.2"), "--truth", cls.truth_dir,
                   f"--skip-rank={cls.SKIPPING}", f"--hang-step={cls.HANG_STEP}"]
        ranks = []
        try:
            for rank in range(cls.RANKS):
                env = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=cls.traces,
                           FAKE_NCCL_RENDEZVOUS=rendezvous, RANK=str(rank),
                           LOCAL_RANK=str(rank), WORLD_SIZE=str(cls.RANKS),
                           MASTER_ADDR="127.0.0.1", MASTER_PORT=str(20000 + os.getpid() % 10000))
                ranks.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, text=True))
            deadline = time.monotonic() + 60
            while len([n for n in os.listdir(cls.truth_dir) if n.endswith(".where")]) < cls.RANKS:
                assert time.monotonic() < deadline, "the ranks never got where they stay"
                assert all(r.poll() is None for r in ranks), [r.communicate() for r in ranks]
                time.sleep(0.05)
            time.sleep(1.5)  # the others in cudaStreamSynchronize, the skipping one in stuck()
        finally:
            for r in ranks:
                r.send_signal(signal.SIGTERM)
            cls.ends = [r.communicate(timeout=30) and r.returncode for r in ranks]
        cls.ranks = {}
        for rank in range(cls.RANKS):
            with open(os.path.join(cls.truth_dir, f"rank{rank}.where")) as f:
                step, where = f.read().split()
            with open(os.path.join(cls.truth_dir, f"rank{rank}.pid")) as f:
                cls.ranks[rank] = {"pid": int(f.read()), "step": int(step), "where": where}
        with open(os.path.join(cls.truth_dir, "unique_id"), "rb") as f:
            cls.hash = "%016x" % fnv1a(f.read())
        # the fake NCCL's count of each rank's calls on the communicator, by its unique id
        [counts] = os.listdir(rendezvous)
        with open(os.path.join(rendezvous, counts), "rb") as f:
            cls.made = list(struct.unpack(f"<{cls.RANKS}Q", f.read()))
        cls.report = report(cls.traces)

    def test_the_job_went_where_it_was_to(self):
        self.assertEqual(self.ends, [-signal.SIGTERM] * self.RANKS)
        self.assertEqual({r: (t["step"], t["where"]) for r, t in self.ranks.items()},
                         {0: (10, "all_reduce"), 1: (10, "all_reduce"), 2: (10, "stuck")})
        self.assertEqual(self.made, [10, 10, 9])

    def test_the_hang_names_the_rank_that_never_came_and_the_collective(self):
        hang = self.report["verdict"][0]
        self.assertEqual(hang["kind"], "hang", hang)
        waiting = [r for r, count in enumerate(self.made) if count == max(self.made)]
        [missing] = [r for r, count in enumerate(self.made) if count < max(self.made)]
        evidence = hang["evidence"]
        self.assertEqual((evidence["waiting_ranks"], evidence["missing_ranks"],
                          evidence["first_missing_rank"]), (len(waiting), 1, missing))
        # the collective waited for: the first call the missing rank never made, by the fake
        # NCCL's own count, and how far it came
        self.assertEqual(evidence["collective_seq"], self.made[missing] + 1)
        self.assertEqual(evidence["missing_rank_last_seq"], self.made[missing])
        wait_line = line_of(self.PROGRAM, "# the others wait here")
        stuck_line = line_of(self.PROGRAM, "# stuck here")
        self.assertEqual(hang["line"], f"{self.PROGRAM}:{wait_line} in main")
        summary = hang["summary"]
        self.assertTrue(summary.startswith(f"rank {missing} never came to the call where ranks "
                                           f"{waiting[0]} and {waiting[1]} (of {self.RANKS}) "
                                           "waited"), summary)
        # blocked in the synchronisation, the runtime's or the driver's under it
        self.assertRegex(summary, r"cu(da)?StreamSynchronize \(waiting for the GPU\) at "
                         + re.escape(f"{self.PROGRAM}:{wait_line} in main"))
        self.assertIn(f"NCCL all_reduce #{self.made[missing] + 1} of communicator {self.hash} "
                      f"({self.RANKS} ranks), which they made and rank {missing} never did",
                      summary)
        pid = self.ranks[missing]["pid"]
        self.assertRegex(summary, rf"Rank {missing} \(pid {pid}\), whose last call on that "
                         rf"communicator was #{self.made[missing]}, was (in a sleep at "
                         rf"{re.escape(self.PROGRAM)}:{stuck_line}|running, last seen at "
                         rf"{re.escape(self.PROGRAM)}:\d+) in stuck")

    def test_each_waiting_rank_says_what_it_was_blocked_in(self):
        wait_line = line_of(self.PROGRAM, "# the others wait here")
        by_pid = {p["pid"]: p for p in self.report["processes"]}
        for rank, truth in self.ranks.items():
            if truth["where"] != "all_reduce":
                continue
            [main] = [b for b in by_pid[truth["pid"]]["end"]["blocked"] if b["tid"] == truth["pid"]]
            self.assertRegex(main["in"], r"^cu(da)?StreamSynchronize \(waiting for the GPU\)")
            self.assertEqual(main["line"], f"{self.PROGRAM}:{wait_line} in main")
            # since about its own account of the collective: the job ran 1.5 s more
            self.assertGreaterEqual(main["for_ns"], 1.0e9, main)


class RealNccl(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.python, cls.library = real_libnccl()
        if not cls.python:
            raise unittest.SkipTest("no CUDA venv with the nvidia-nccl-cu13 wheel at %r "
                                    "(tools/setup --cuda)" % CUDA_PYTHON)
        command = [cls.python, os.path.join(HERE, "real_nccl.py"), cls.library]
        cls.plain = subprocess.run(command, capture_output=True, text=True, timeout=120)
        cls.traces, cls.profiled = record(command)

    def test_answers_as_without_the_preload(self):
        self.assertEqual((self.profiled.returncode, self.profiled.stdout),
                         (self.plain.returncode, self.plain.stdout))
        self.assertIn("version 0 23007\n", self.plain.stdout)
        self.assertRegex(self.plain.stdout, r"init_rank [1-9]\d* None")  # no GPU here

    def test_the_failed_init_is_in_the_trace_with_its_ids_hash(self):
        [unique_id] = re.findall(r"^id ([0-9a-f]{256})$", self.profiled.stderr, re.M)
        [code] = re.findall(r"^init_rank (\d+)", self.profiled.stdout, re.M)
        lines = re.findall(r"nccl_comm init_rank( failed)? comm=0x0 hash=([0-9a-f]+) rank=(-?\d+) "
                           r"nranks=(-?\d+)", dump(self.traces))
        self.assertEqual(lines, [(" failed" if code != "0" else "",
                                  "%016x" % fnv1a(bytes.fromhex(unique_id)), "0", "1")])


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))
    from unittest_summary import main
    main()
