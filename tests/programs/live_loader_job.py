"""A DataLoader loop for `profinject top`: 2 workers that sleep 20 ms a
sample (batch 2), a loop that computes 5 ms a step. Runs for the seconds
given, printing its pid first and, at the end, its own account as JSON:
steps a second and the share of its time spent in next() (waiting for and
receiving its batches), by its own clock.

Usage: live_loader_job.py SECONDS"""
import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


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
    start, steps, waited = time.monotonic(), 0, 0.0
    deadline = start + float(sys.argv[1])
    while time.monotonic() < deadline:
        at = time.monotonic()
        next(batches)
        waited += time.monotonic() - at
        until = time.monotonic() + 0.005
        while time.monotonic() < until:
            pass
        steps += 1
    elapsed = time.monotonic() - start
    print(json.dumps({"steps_per_s": steps / elapsed, "next_share": waited / elapsed}), flush=True)
    os._exit(0)
