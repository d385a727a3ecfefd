#!/usr/bin/env python3
"""cuBLAS and cuBLASLt products under the preload.

prog_gemm against the fake libcublas.so.13 and libcublasLt.so.13
(tests/fake_cublas) on the fake device: the report's GEMM table must give
back exactly the calls, shapes and FLOPs (2·m·n·k·batch) the program says
it made, the GPU time the fake device's rule gives their kernels
(fake_cublas.h), and the peak and model FLOPs utilisation that the fake
device's SM count and clock make, computed here from NVIDIA's figures; a
device not in the table has no peak and says so.

Run by ctest with the build's paths in the environment."""
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profiled_job import analyzer_report  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
PROGRAMS = os.environ["PI_PROGRAMS"]
# GPU times through the fake CUPTI: the fake device's own start and end of each kernel, against
# the rule's durations within its clock's mapping to ours. (Event pairs on the fake device add
# the host's time between a pair's first event and an idle stream's launch: 13% of a shape's
# time once on a busy machine.)
TOLERANCE = 0.01
FAKE_CUPTI = os.environ["PI_FAKE_CUPTI"]

# NVIDIA's dense figures: 4096 bf16 FLOPs per clock per SM on sm_90; the H100 SXM5's
# datasheet clock is 1.83 GHz, whatever clock the device reports.
SM90_BF16_PER_CLOCK = 4096
H100_SXM_SMS, H100_SXM_DATASHEET_HZ = 132, 1.83e9


def record(env=None):
    traces = tempfile.mkdtemp()
    environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces,
                       NVTX_INJECTION64_PATH=PRELOAD, LD_LIBRARY_PATH=FAKE_CUPTI,
                       **(env or {}))
    result = subprocess.run([os.path.join(PROGRAMS, "prog_gemm")], env=environment,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result
    truth = json.loads(result.stdout)
    assert truth["failures"] == 0, truth
    return traces, truth


def report(traces, flag="--json"):
    return analyzer_report(ANALYZE, traces, flag)


def flops(call):
    return 2 * call["m"] * call["n"] * call["k"] * call["batch"]


def kernels_of(call):
    """fake_cublas.h: a strided batched product launches a main kernel and a split-K reduction"""
    return 2 if call["api"] == "cublasGemmStridedBatchedEx" else 1


def made(truth):
    return [c for c in truth["calls"] if not c["failed"]]


class Gemm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.traces, cls.truth = record()
        cls.report = report(cls.traces)
        cls.gemm = cls.report["gemm"]

    def expected_shapes(self):
        rows = collections.defaultdict(lambda: {"calls": 0, "kernels": 0, "flops": 0, "gpu_ns": 0})
        for c in made(self.truth):
            row = rows[(c["m"], c["n"], c["k"], c["batch"], c["dtype"])]
            row["calls"] += 1
            row["kernels"] += kernels_of(c)
            row["flops"] += flops(c)
            row["gpu_ns"] += c["kernel_ns"]
        return rows

    def test_each_shape_has_the_calls_and_flops_the_program_made(self):
        got = {(r["m"], r["n"], r["k"], r["batch"], r["dtype"]): (r["calls"], r["kernels"], r["flops"])
               for r in self.gemm["shapes"]}
        want = {k: (v["calls"], v["kernels"], v["flops"]) for k, v in self.expected_shapes().items()}
        self.assertEqual(got, want)

    def test_totals_count_every_call_and_the_refused_one_apart(self):
        calls = made(self.truth)
        self.assertEqual(self.gemm["calls"], len(calls))
        self.assertEqual(self.gemm["failed"], len(self.truth["calls"]) - len(calls))
        self.assertEqual(self.gemm["flops"], sum(flops(c) for c in calls))

    def test_gpu_time_and_tflops_are_the_fake_devices(self):
        self.assertEqual(self.report["gpu"]["timing"], "cupti", self.report["gpu"])
        want = self.expected_shapes()
        for r in self.gemm["shapes"]:
            w = want[(r["m"], r["n"], r["k"], r["batch"], r["dtype"])]
            self.assertAlmostEqual(r["gpu_ns"], w["gpu_ns"], delta=TOLERANCE * w["gpu_ns"])
            self.assertAlmostEqual(r["tflops_per_s"], w["flops"] / w["gpu_ns"] / 1e3,
                                   delta=TOLERANCE * w["flops"] / w["gpu_ns"] / 1e3)
        total_ns = sum(c["kernel_ns"] for c in made(self.truth))
        self.assertAlmostEqual(self.gemm["gpu_ns"], total_ns, delta=TOLERANCE * total_ns)
        self.assertEqual(self.gemm["untimed_kernels"], 0)

    def test_flops_per_step_are_the_programs(self):
        # every product the program made was inside a step, each step the same products
        steps = len(self.truth["step_ns"])
        self.assertEqual(self.gemm["flops_per_step"],
                         sum(flops(c) for c in made(self.truth)) / steps)

    def test_peak_is_the_h100_datasheets(self):
        peak = self.gemm["peak"]
        by_type = collections.Counter()
        for c in made(self.truth):
            by_type[c["dtype"]] += flops(c)
        self.assertEqual(peak["dtype"], by_type.most_common(1)[0][0])
        self.assertEqual(peak["dtype"], "bf16")
        want = SM90_BF16_PER_CLOCK * H100_SXM_SMS * H100_SXM_DATASHEET_HZ / 1e12
        self.assertAlmostEqual(peak["tflops_per_s"], want, delta=0.05)
        self.assertEqual(peak["source"], "datasheet")
        self.assertEqual(peak["device"], "NVIDIA H100 80GB HBM3")

    def test_mfu_is_flops_per_step_over_step_time_and_peak(self):
        steady = self.gemm["steady_steps"]
        step_ns = self.truth["step_ns"][-steady:]  # the steady steps are the last ones
        per_step = sum(flops(c) for c in made(self.truth)) / len(self.truth["step_ns"])
        want = per_step * steady / (sum(step_ns) / 1e9) / (self.gemm["peak"]["tflops_per_s"] * 1e12)
        self.assertAlmostEqual(self.gemm["mfu"], want, delta=0.1 * want)

    def test_the_recorder_kept_the_transposes_the_program_asked_for(self):
        dump = "".join(subprocess.run([ANALYZE, "dump", os.path.join(self.traces, name)],
                                      check=True, capture_output=True, text=True).stdout
                       for name in os.listdir(self.traces))
        products = [line for line in dump.splitlines() if " gemm api=" in line]
        self.assertEqual(len(products), len(self.truth["calls"]))
        steps = len(self.truth["step_ns"])
        # A transposed: cublasGemmEx and both cuBLASLt products; B: the strided batched one
        self.assertEqual(sum(" trans_a" in line for line in products), 3 * steps)
        self.assertEqual(sum(" trans_b" in line for line in products), steps)

    def test_text_and_page_say_the_peak_and_the_shapes(self):
        text = report(self.traces, "--text")
        self.assertIn("GEMMS (cuBLAS, cuBLASLt)", text)
        self.assertIn("989.4 TFLOP/s bf16 (datasheet", text)
        self.assertIn("model FLOPs utilisation >=", text)
        self.assertIn("[384×192]·[192×256]", text)
        page = report(self.traces, "--html")
        self.assertIn("<table class=\"gemm\">", page)
        for c in made(self.truth):
            self.assertIn(f"[{c['m']}×{c['k']}]·[{c['k']}×{c['n']}]", page)

    def test_chrome_trace_has_a_slice_per_call_with_its_shape(self):
        path = os.path.join(tempfile.mkdtemp(), "trace.json")
        subprocess.run([ANALYZE, self.traces, "--quiet", "--chrome-trace", path], check=True,
                       capture_output=True)
        with open(path) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        slices = [e["args"] for e in events if e.get("name") == "gemm"]
        got = sorted((a["m"], a["n"], a["k"], a["batch"], a["flops"]) for a in slices
                     if not a["failed"])
        want = sorted((c["m"], c["n"], c["k"], c["batch"], flops(c)) for c in made(self.truth))
        self.assertEqual(got, want)
        self.assertEqual(sum(a["failed"] for a in slices),
                         len(self.truth["calls"]) - len(made(self.truth)))

    def test_export_has_a_row_per_shape(self):
        out = tempfile.mkdtemp()
        subprocess.run([ANALYZE, self.traces, "--quiet", "--export", out, "--export-format",
                        "both"], check=True, capture_output=True,
                       env=dict(os.environ, PROFINJECT_PYTHON=sys.executable))
        with open(os.path.join(out, "gemm_shapes.csv")) as f:
            rows = list(csv.DictReader(f))
        got = {(int(r["m"]), int(r["n"]), int(r["k"]), int(r["batch"]), r["dtype"]):
               (int(r["calls"]), int(r["flops"])) for r in rows}
        want = {k: (v["calls"], v["flops"]) for k, v in self.expected_shapes().items()}
        self.assertEqual(got, want)
        # the Parquet table, typed: the same shapes and counts
        import pyarrow.parquet as pq
        rows = pq.read_table(os.path.join(out, "gemm_shapes.parquet")).to_pylist()
        got = {(r["m"], r["n"], r["k"], r["batch"], r["dtype"]): (r["calls"], r["flops"])
               for r in rows}
        self.assertEqual(got, want)


class OtherDevices(unittest.TestCase):
    def test_another_sm_count_is_computed_from_the_reported_clock(self):
        traces, _ = record({"FAKE_CUDA_DEVICE_SMS": "100", "FAKE_CUDA_DEVICE_CLOCK_KHZ": "1500000",
                            "FAKE_CUDA_DEVICE_NAME": "sm_90 with 100 SMs"})
        gemm = report(traces)["gemm"]
        self.assertAlmostEqual(gemm["peak"]["tflops_per_s"], SM90_BF16_PER_CLOCK * 100 * 1.5e9 / 1e12)
        self.assertEqual(gemm["peak"]["source"], "computed from the reported clock")
        self.assertIsNotNone(gemm["mfu"])

    def test_an_unknown_device_has_no_peak_and_says_so(self):
        traces, truth = record({"FAKE_CUDA_DEVICE_CC": "7.5", "FAKE_CUDA_DEVICE_NAME": "Turing <T4>"})
        gemm = report(traces)["gemm"]
        self.assertIsNone(gemm["peak"])
        self.assertIsNone(gemm["mfu"])
        self.assertEqual(gemm["flops"], sum(flops(c) for c in made(truth)))
        self.assertIn("peak unknown for Turing <T4> (sm_75", report(traces, "--text"))
        # the name comes from the trace: escaped on the page
        page = report(traces, "--html")
        self.assertIn("peak unknown for Turing &lt;T4&gt; (sm_75", page)
        self.assertNotIn("<T4>", page)


class GemmByModule(unittest.TestCase):
    """The FLOPs of each module path: py_gemm_modules.py's own count of what it multiplied under
    each, every launch sampled. Its fp32 products run under Attention only and its bf16 ones
    under MLP only, and the fake kernels are named by type, as cuBLAS's are: the FLOPs a kernel
    name did go to its sampled launches' paths exactly."""

    def test_each_module_path_has_the_flops_made_under_it(self):
        traces = tempfile.mkdtemp()
        program = os.path.join(os.environ["PI_SOURCE"], "tests", "cuda_programs",
                               "py_gemm_modules.py")
        environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces,
                           PROFINJECT_PY_SAMPLE="1", LD_LIBRARY_PATH=FAKE_CUPTI)
        result = subprocess.run([sys.executable, program,
                                 os.path.join(os.environ["PI_FAKE_CUDA"], "libcudart.so.13"),
                                 os.path.join(os.environ["PI_FAKE_CUBLAS"], "libcublas.so.13")],
                                env=environment, capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result)
        truth = json.loads(result.stdout)
        rows = {r["path"]: r for r in report(traces)["gemm"]["modules"]}
        self.assertEqual(set(rows), set(truth))
        for path, want in truth.items():
            self.assertAlmostEqual(rows[path]["flops"], want["flops"], delta=1e-6 * want["flops"],
                                   msg=path)
            self.assertAlmostEqual(rows[path]["gpu_ns"], want["kernel_ns"],
                                   delta=TOLERANCE * want["kernel_ns"], msg=path)


class NoGemm(unittest.TestCase):
    def test_a_trace_without_products_has_no_gemm_object(self):
        traces = tempfile.mkdtemp()
        environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
        subprocess.run([os.path.join(PROGRAMS, "prog_cuda_runtime")], env=environment,
                       capture_output=True, check=True, timeout=120)
        self.assertIsNone(report(traces).get("gemm"))


if __name__ == "__main__":
    unittest.main()
