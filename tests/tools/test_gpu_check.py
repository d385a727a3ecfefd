#!/usr/bin/env python3
"""tools/gpu-check where there is no GPU (a skip) or where one is but PyTorch
cannot use it (a failure), and its workloads' own logic on the CPU (the
project's PyTorch): the real comparison runs on a GPU machine."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ["PI_SOURCE"]
PYTHON = sys.executable


def workload(script, *args):
    """Run examples/gpu/@script on the CPU; its truths."""
    truths = os.path.join(tempfile.mkdtemp(), "truths.json")
    result = subprocess.run([PYTHON, os.path.join(SOURCE, "examples", "gpu", script), "--device",
                             "cpu", "--truths", truths, *args], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    with open(truths) as f:
        return json.load(f)


class GpuCheck(unittest.TestCase):
    def test_without_a_gpu_it_says_so_and_succeeds(self):
        result = subprocess.run([os.path.join(SOURCE, "tools", "gpu-check"), "--python", PYTHON],
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout,
                         "gpu-check: skipped: no GPU (torch.cuda.is_available() is False)\n")

    def fake_gpu(self):
        """a PATH whose nvidia-smi lists a GPU: the driver says there is one"""
        bin_dir = tempfile.mkdtemp()
        with open(os.path.join(bin_dir, "nvidia-smi"), "w") as f:
            f.write("#!/bin/sh\necho 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'\n")
        os.chmod(os.path.join(bin_dir, "nvidia-smi"), 0o755)
        return dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])

    def test_a_gpu_that_pytorch_cannot_use_fails(self):
        # this torch is a CPU build: with a GPU present that is a failure, never a skip
        result = subprocess.run([os.path.join(SOURCE, "tools", "gpu-check"), "--python", PYTHON],
                                capture_output=True, text=True, timeout=300, env=self.fake_gpu())
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertNotIn("skipped", result.stdout)
        self.assertIn("failed: a GPU is present but torch.cuda.is_available() is False",
                      result.stderr)

    def test_a_gpu_without_pytorch_fails(self):
        no_torch = tempfile.mkdtemp()
        subprocess.run([PYTHON, "-m", "venv", "--without-pip", no_torch], check=True)
        result = subprocess.run([os.path.join(SOURCE, "tools", "gpu-check"), "--python",
                                 os.path.join(no_torch, "bin", "python")], capture_output=True,
                                text=True, timeout=300, env=self.fake_gpu())
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("failed: a GPU is present but no PyTorch for", result.stderr)

    def test_without_a_gpu_or_pytorch_it_is_a_skip(self):
        no_torch = tempfile.mkdtemp()
        subprocess.run([PYTHON, "-m", "venv", "--without-pip", no_torch], check=True)
        result = subprocess.run([os.path.join(SOURCE, "tools", "gpu-check"), "--python",
                                 os.path.join(no_torch, "bin", "python")], capture_output=True,
                                text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("gpu-check: skipped: no GPU (no PyTorch for"),
                        result.stdout)

    def test_training_job_counts_its_steps(self):
        data = tempfile.mkdtemp()
        truths = os.path.join(data, "truths.json")
        result = subprocess.run([PYTHON, os.path.join(SOURCE, "examples", "pytorch_train.py"),
                                 "--device", "cpu", "--pin-memory", "--workers", "1", "--samples",
                                 "96", "--batch-size", "16", "--epochs", "2", "--max-steps", "8",
                                 "--data-dir", data, "--truths", truths], capture_output=True,
                                text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(truths) as f:
            self.assertEqual(json.load(f)["steps"], 8)

    def test_workloads_run_and_say_what_they_did(self):
        self.assertEqual(workload("compiled.py", "--calls", "4", "--size", "64")["calls"], 7)
        self.assertEqual(workload("cuda_graph.py", "--replays", "3")["replays"], 3)
        self.assertGreater(workload("tiny_ops.py", "--ops", "1000")["us_per_op"], 0)
        nccl = workload("nccl_allreduce.py", "--calls", "5")
        self.assertEqual((nccl["all_reduce"], nccl["broadcast"], nccl["value"]), (5, 5, 1.0))
        two = workload("nccl_two_ranks.py", "--calls", "3", "--numel", "1024")
        # ones summed over two ranks, 3 + 3 times
        self.assertEqual([(r["rank"], r["all_reduce"], r["bytes_each"], r["value"])
                          for r in two["ranks"]], [(0, 6, 4096, 64.0), (1, 6, 4096, 64.0)])

    def test_under_torch_profiler_no_gpu_work_is_made_up(self):
        self.assertEqual(workload("cuda_graph.py", "--replays", "2", "--torch-profiler")["kernels"],
                         {})


class GpuCheckComparisons(unittest.TestCase):
    """--analyze on results recorded from the test double: examples/cuda's
    train_step pattern (tests/cuda_programs/prog_train_step.c), whose own
    figures are fixed in its source."""

    TRUTHS = {"launches": {"scale": 1000, "reduce": 50, "busy": 100},
              "device_peak_bytes": (16 << 20) + 4 + (64 << 20),
              "device_live_at_end_bytes": 64 << 20, "busy_total_ns": 100 * 100000}

    @classmethod
    def setUpClass(cls):
        cls.results = tempfile.mkdtemp()
        traces = os.path.join(cls.results, "nvcc", "traces")
        os.makedirs(traces)
        environment = dict(os.environ, LD_PRELOAD=os.environ["PI_PRELOAD"],
                           PROFINJECT_OUTPUT=traces, LD_LIBRARY_PATH=os.environ["PI_FAKE_CUPTI"])
        result = subprocess.run([os.path.join(os.environ["PI_PROGRAMS"], "prog_train_step")],
                                env=environment, capture_output=True, text=True, timeout=120)
        assert result.stdout == "done\n", result.stderr

    def analyze(self, truths):
        with open(os.path.join(self.results, "nvcc", "truths.json"), "w") as f:
            json.dump(truths, f)
        return subprocess.run([os.path.join(SOURCE, "tools", "gpu-check"), "--analyze",
                               self.results, "--analyzer", os.environ["PI_ANALYZE"]],
                              capture_output=True, text=True, timeout=300)

    def test_checks_pass_against_the_programs_own_figures(self):
        result = self.analyze(self.TRUTHS)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(sorted(line.split()[1] for line in result.stdout.splitlines()
                                if line.startswith("check ")),
                         ["gpu_time_nvcc_busy", "launches_nvcc_busy", "launches_nvcc_reduce",
                          "launches_nvcc_scale", "memory_nvcc_device_peak"])
        self.assertNotIn(" fail ", result.stdout)

    def test_a_figure_the_profiler_got_wrong_fails(self):
        truths = dict(self.TRUTHS, launches=dict(self.TRUTHS["launches"], scale=1001),
                      busy_total_ns=self.TRUTHS["busy_total_ns"] * 1.1)
        result = self.analyze(truths)
        self.assertEqual(result.returncode, 1)
        self.assertIn("check launches_nvcc_scale fail profiler=1000 truth=1001", result.stdout)
        self.assertIn("check gpu_time_nvcc_busy fail", result.stdout)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
