#!/usr/bin/env python3
"""bench_dataloader_cpu.py - the profiler's CPU overhead on a CPU-saturated
DataLoader job (examples/pytorch_train.py, 2 workers), with a confidence
interval, and where the profiler's share goes. Run by tools/bench:

    bench_dataloader_cpu.py LIBRARY ANALYZER EXAMPLE DATA_DIR SCRATCH HOOK_NS START_CPU_MS

CPU time is the kernel's accounting of the whole process tree: each job is
a child of this script, which waits for it, and the job's main process
joins its DataLoader workers, so RUSAGE_CHILDREN grows by the user and
system time of every process of the tree. Pairs (one run without the
preload, one with, the order alternating) are run until the 95% bootstrap
interval of the median overhead is narrower than 1 percentage point, or
until BENCH_DATALOADER_MAX_PAIRS pairs (default 30) or
BENCH_DATALOADER_SECONDS (default 300) are spent. Prints "name value unit".
"""
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time


def run(command, env):
    """CPU seconds (user + system) and minor faults of the whole tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_minflt - before.ru_minflt


def bootstrap_median_ci(values, rounds=2000, seed=1):
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(0.025 * rounds)], medians[int(0.975 * rounds) - 1]


def trace_counts(analyzer, traces, scratch):
    """Records by kind, processes, and the profiler threads' CPU, from the traces."""
    info = subprocess.run([analyzer, "info", traces], capture_output=True, text=True).stdout
    kinds, in_kinds = {}, False
    for line in info.splitlines():
        if line.startswith("records by kind"):
            in_kinds = True
        elif in_kinds and line.strip():
            name, count = line.split()[:2]
            kinds[name] = int(count)
        elif in_kinds:
            break
    report = os.path.join(scratch, "report.json")
    subprocess.run([analyzer, traces, "--quiet", "--json", report], check=True,
                   capture_output=True)
    with open(report) as f:
        processes = json.load(f)["processes"]
    return kinds, len(processes), sum(p["cpu"]["profiler_ns"] for p in processes) / 1e9


def main():
    library, analyzer, example, data_dir, scratch, hook_ns, start_cpu_ms = sys.argv[1:8]
    hook_ns, start_cpu_ms = float(hook_ns), float(start_cpu_ms)
    max_pairs = int(os.environ.get("BENCH_DATALOADER_MAX_PAIRS", "30"))
    budget = float(os.environ.get("BENCH_DATALOADER_SECONDS", "300"))
    command = [sys.executable, example, "--data-dir", data_dir, "--samples", "512",
               "--epochs", "2", "--workers", "2"]
    plain_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    traces = os.path.join(scratch, "traces")
    preload_env = dict(plain_env, LD_PRELOAD=library, PROFINJECT_OUTPUT=traces)
    run(command, plain_env)  # the dataset written, the page cache warm

    ratios, plain_cpu, preload_cpu, plain_faults, preload_faults = [], [], [], [], []
    counts = None
    start = time.monotonic()
    low, high = float("-inf"), float("inf")
    while len(ratios) < max_pairs:
        shutil.rmtree(traces, ignore_errors=True)
        if len(ratios) % 2 == 0:
            (p, pf), (q, qf) = run(command, plain_env), run(command, preload_env)
        else:
            (q, qf), (p, pf) = run(command, preload_env), run(command, plain_env)
        plain_cpu.append(p)
        preload_cpu.append(q)
        plain_faults.append(pf)
        preload_faults.append(qf)
        ratios.append(100 * (q / p - 1))
        if counts is None:
            counts = trace_counts(analyzer, traces, scratch)
        if len(ratios) >= 6:
            low, high = bootstrap_median_ci(ratios)
            if high - low < 1.0:
                break
        if time.monotonic() - start > budget and len(ratios) >= 6:
            break
    shutil.rmtree(traces, ignore_errors=True)

    overhead = statistics.median(ratios)
    print(f"dataloader_cpu_overhead_pct {overhead:.2f} %")
    print(f"dataloader_cpu_overhead_ci95_low {low:.2f} %")
    print(f"dataloader_cpu_overhead_ci95_high {high:.2f} %")
    print(f"dataloader_pairs {len(ratios)} pairs")
    base = statistics.median(plain_cpu)
    print(f"dataloader_cpu_s {base:.3f} s (no preload) {statistics.median(preload_cpu):.3f} s (preload)")
    # Where the profiler's share goes, from the first profiled run's traces.
    kinds, processes, profiler_threads_s = counts
    hooked = sum(kinds.get(k, 0) for k in ("io", "wait", "range", "gpu_alloc", "gpu_free",
                                           "gpu_launch", "gpu_copy", "thread_start"))
    wakes = kinds.get("proc_sample", 0) + kinds.get("clock_sync", 0)
    share = lambda seconds: 100 * seconds / base  # noqa: E731
    hooks_s = hooked * hook_ns / 1e9
    print(f"dataloader_hooks_cpu_pct {share(hooks_s):.3f} % ({hooked} hooked calls x {hook_ns:.0f} ns)")
    print(f"dataloader_profiler_threads_cpu_pct {share(profiler_threads_s):.3f} % "
          f"({1e3 * profiler_threads_s:.1f} ms: writer wakes for {kinds.get('proc_sample', 0)} "
          f"samples and {kinds.get('clock_sync', 0)} flushes, {wakes} in all)")
    print(f"dataloader_start_cpu_pct {share(processes * start_cpu_ms / 1e3):.3f} % "
          f"({processes} processes x {start_cpu_ms:.2f} ms)")
    print(f"dataloader_minor_faults {statistics.median(plain_faults):.0f} faults (no preload) "
          f"{statistics.median(preload_faults):.0f} faults (preload)")


if __name__ == "__main__":
    main()
