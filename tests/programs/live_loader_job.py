"""A DataLoader loop for `profinject top`: 2 workers that sleep 20 ms a
sample (batch 2), a loop that computes 5 ms a step. Runs for the seconds
given, printing its pid first and, at the end, its own account as JSON:
steps a second, the share of its time spent in next() (waiting for and
receiving its batches), and of that the share it was blocked: its time in
next() less its CPU there (time.thread_time) and its wait for a CPU there
(the kernel's run delay, /proc/thread-self/schedstat).

Usage: live_loader_job.py SECONDS"""
import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


def run_delay():
    """this thread's time ready to run and waiting for a CPU so far, in seconds"""
    with open("/proc/thread-self/schedstat") as f:
        return int(f.read().split()[1]) / 1e9


class Files(Dataset):
    def __len__(self):
        return 1_000_000

    def __getitem__(self, i):
        time.sleep(0.02)
        return torch.zeros(4)


if __name__ == "__main__":
    batches = iter(DataLoader(Files(), batch_size=2, num_workers=2))
    next(batches)  # the workers up
    print(os.getpid(), flush=True)
    start, steps, waited, blocked = time.monotonic(), 0, 0.0, 0.0
    deadline = start + float(sys.argv[1])
    while time.monotonic() < deadline:
        at, cpu, delay = time.monotonic(), time.thread_time(), run_delay()
        next(batches)
        spent = time.monotonic() - at
        waited += spent
        blocked += spent - (time.thread_time() - cpu) - (run_delay() - delay)
        until = time.monotonic() + 0.005
        while time.monotonic() < until:
            pass
        steps += 1
    elapsed = time.monotonic() - start
    print(json.dumps({"steps_per_s": steps / elapsed, "next_share": waited / elapsed,
                      "blocked_share": blocked / elapsed}), flush=True)
    os._exit(0)
