#!/usr/bin/env python3
"""bench_dataloader_instructions.py - the profiler's overhead on the DataLoader
job in instructions, the measure that this machine's noise does not move.
Run by tools/bench:

    bench_dataloader_instructions.py LIBRARY EXAMPLE DATA_DIR SCRATCH

A smaller run of the example (64 samples, one epoch, 2 workers) under
callgrind, without and with the preload: every user-space instruction of
every process and thread of the tree, the profiler's threads included.
What the kernel does for the profiler (its wakes, system calls, page
faults) is not counted: bench_dataloader_cpu.py's CPU time has it.

Under callgrind the job runs some 50 times slower while the profiler's
timers keep wall-clock time, so its periodic work (flushes, process
samples, Python time samples) and its wait threshold would be 50 times
denser per instruction of the job than in a real run. They are stretched
by the slowdown measured here (the plain job's time under callgrind over
its time without), so that the profiler does the work per unit of the
job's progress that it does natively.

callgrind's counters are dumped at every fork (--dump-before=fork), so a
DataLoader worker's file counts what the worker did, not what it inherited.
PYTHONHASHSEED is fixed so both runs execute the same Python.
Prints "name value unit".
"""
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time

# the defaults of PROFINJECT_FLUSH_MS, _SAMPLE_MS, _PY_TIME_MS, _WAIT_US and _NATIVE_CPU_MS
# (preload/core/settings.c); native CPU samples come by each thread's CPU clock, which runs
# as much faster than the job under callgrind as a wall clock does (set, they start in the
# constructor rather than at the first flush: all these processes run Python either way)
TIMERS = {"PROFINJECT_FLUSH_MS": 100, "PROFINJECT_SAMPLE_MS": 50, "PROFINJECT_PY_TIME_MS": 10,
          "PROFINJECT_WAIT_US": 20, "PROFINJECT_NATIVE_CPU_MS": 10}


def wall(command, env):
    start = time.monotonic()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def instructions(prefix):
    """Per process, the sum of the totals of its callgrind file and dumped parts
    (@prefix.PID and @prefix.PID.N), largest first: the main process, then its workers."""
    per_pid = {}
    for path in glob.glob(prefix + ".*"):
        pid = path[len(prefix) + 1:].split(".")[0]
        with open(path) as f:
            for line in f:
                if line.startswith("totals:"):
                    per_pid[pid] = per_pid.get(pid, 0) + int(line.split()[1])
    return sorted(per_pid.values(), reverse=True)


def main():
    library, example, data_dir, scratch = sys.argv[1:5]
    if shutil.which("valgrind") is None:
        print("dataloader_instructions_overhead_pct skipped (no valgrind)")
        return
    command = [sys.executable, example, "--data-dir", data_dir, "--samples", "64", "--epochs",
               "1", "--workers", "2"]
    plain_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    plain_env["PYTHONHASHSEED"] = "0"
    native = statistics.median(wall(command, plain_env) for _ in range(3))

    def callgrind(name, env):
        out = os.path.join(scratch, name)
        return wall(["valgrind", "--tool=callgrind", "--trace-children=yes",
                     "--dump-before=fork", f"--callgrind-out-file={out}.%p"] + command, env), \
            instructions(out)

    plain_wall, plain_processes = callgrind("plain", plain_env)
    slowdown = plain_wall / native
    preload_env = dict(plain_env, LD_PRELOAD=library,
                       PROFINJECT_OUTPUT=os.path.join(scratch, "traces"))
    for name, default in TIMERS.items():
        preload_env[name] = str(round(default * slowdown))
    _, preload_processes = callgrind("preload", preload_env)
    plain, preload = sum(plain_processes), sum(preload_processes)
    print(f"dataloader_instructions_overhead_pct {100 * (preload / plain - 1):.2f} % "
          f"(goal <= 1; user-space instructions of the whole tree, {plain / 1e9:.2f} G without, "
          f"{preload / 1e9:.2f} G with; the profiler's timers stretched x{slowdown:.0f}, "
          f"the job's slowdown under callgrind)")
    if len(plain_processes) == len(preload_processes) > 1:
        workers = [q - p for p, q in zip(plain_processes[1:], preload_processes[1:])]
        print(f"dataloader_instructions_added {(preload_processes[0] - plain_processes[0]) / 1e6:.1f} "
              f"M (main process) {statistics.median(workers) / 1e6:.1f} M (each DataLoader worker, "
              f"median of {len(workers)}; a worker's own work: "
              f"{statistics.median(plain_processes[1:]) / 1e6:.1f} M)")


if __name__ == "__main__":
    main()
