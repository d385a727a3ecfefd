"""A tiny model starved by its input: a DataLoader of 2 workers whose
samples each take 15 ms to load (a sleep), batch 8, and a loop that
computes WORK_MS a step (0: none at all). Prints as JSON its step count and
its own clock: the monotonic time (ns) at which each batch came out of
next(), so that a step runs from one batch's arrival to the next; right
before each next() call (the last one ended the epoch), so that a step runs
from one call's entry to the next; and, at each arrival, how many batches
that came out of order the DataLoader keeps.

Usage: starved_loop.py STEPS WORK_MS"""
import json
import os
import sys
import time

from torch.utils.data import DataLoader

from loop_parts import Numbers, compute

steps, work_ms = int(sys.argv[1]), float(sys.argv[2])
BATCH = 8

if __name__ == "__main__":
    rows = Numbers(steps * BATCH, {i: 0.015 for i in range(steps * BATCH)})
    arrivals, befores, kept = [], [], []
    batches = iter(DataLoader(rows, batch_size=BATCH, num_workers=2))
    while True:
        befores.append(time.monotonic_ns())
        try:
            batch = next(batches)
        except StopIteration:
            break
        arrivals.append(time.monotonic_ns())
        kept.append(sum(len(task) == 2 for task in batches._task_info.values()))
        if work_ms:
            compute(work_ms / 1000)
    print(json.dumps({"pid": os.getpid(), "steps": len(arrivals), "arrivals_ns": arrivals,
                      "befores_ns": befores, "kept": kept,
                      "prefetched": 2 * batches._num_workers}))
