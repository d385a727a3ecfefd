"""What `profinject stacks` costs the job it reads: a Python loop on the main
thread and two threads that wait, under the preload; `stacks` asked RUNS
times. Prints the medians of the pause it states (the interpreter's lock
held), of the wait for the lock, and of the longest gap the job's own loop
saw around each request (what the pause cost it, as the job tells it);
then, with --native on a fresh job, the time its main thread was stopped
(ptrace) while its native frames were read, and the job's gap again.

Usage: bench_stacks.py LAUNCHER LIBRARY [RUNS]"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

JOB = r'''
import select, statistics, sys, threading, time
lock = threading.Lock(); lock.acquire()
threading.Thread(target=lock.acquire, daemon=True).start()
threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
print("ready", flush=True)
turns, spans = [], []
while True:
    turns.append(time.monotonic_ns())
    if len(turns) % 1000 == 0 and select.select([sys.stdin], [], [], 0)[0]:
        line = sys.stdin.readline()
        if not line:
            break
        spans.append([int(x) for x in line.split()])
gaps = []
for start, end in spans:
    inside = [t for t in turns if start <= t <= end]
    gaps.append(max((b - a for a, b in zip(inside, inside[1:])), default=0))
print(max(gaps, default=0), int(statistics.median(gaps)) if gaps else 0, flush=True)
'''



def requests(launcher, library, runs, *options):
    """@runs requests of `stacks *options` to a fresh job: their outputs, and the job's
    longest gap around them (worst, median) in ns."""
    traces = tempfile.mkdtemp()
    job = subprocess.Popen([sys.executable, "-c", JOB], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True,
                           env=dict(os.environ, LD_PRELOAD=library, PROFINJECT_OUTPUT=traces))
    assert job.stdout.readline().strip() == "ready"
    time.sleep(0.3)  # its control socket is made at its first flush
    outs = []
    for _ in range(runs):
        start = time.monotonic_ns()
        outs.append(subprocess.run([launcher, "stacks", *options, str(job.pid)],
                                   capture_output=True, text=True).stdout)
        end = time.monotonic_ns()
        job.stdin.write(f"{start} {end}\n")
        job.stdin.flush()
    job.stdin.close()
    worst, median_gap = (int(x) for x in job.stdout.readline().split())
    job.wait()
    return outs, job.pid, worst, median_gap


launcher, library = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 9
outs, _, worst, median_gap = requests(launcher, library, runs)
held, taken = [], []
for out in outs:
    found = re.search(r"taken after ([\d.]+) ms and held ([\d.]+) ms", out)
    if found:
        taken.append(float(found.group(1)))
        held.append(float(found.group(2)))
print(f"stacks_pause_ms {statistics.median(held):.2f} ms (goal <= 10; the interpreter's lock held, "
      f"median of {len(held)})")
print(f"stacks_lock_wait_ms {statistics.median(taken):.2f} ms (until the main thread let go of the lock)")
print(f"stacks_job_gap_ms {median_gap / 1e6:.2f} ms (the job's own loop: its longest gap around a "
      f"request, median; worst {worst / 1e6:.2f} ms)")
outs, pid, worst, median_gap = requests(launcher, library, runs, "--native")
stopped = [float(found.group(1)) for out in outs
           for found in [re.search(rf"\(tid {pid}\), stopped ([\d.]+) ms", out)] if found]
print(f"stacks_native_stop_ms {statistics.median(stopped):.2f} ms (goal <= 10; --native: the main "
      f"thread stopped while its native frames were read, median of {len(stopped)})")
print(f"stacks_native_job_gap_ms {median_gap / 1e6:.2f} ms (the job's own loop around a --native "
      f"request, median; worst {worst / 1e6:.2f} ms)")
