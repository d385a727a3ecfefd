"""A job whose start-up computes something its steps never do: it sorts a large tensor
for --startup-s of its CPU time, then runs a DataLoader loop of matrix products (one
worker, so the loop has steps). Prints one JSON line: its own account (the sort's CPU
time by its thread's clock, the steps it ran)."""
import argparse
import json
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--startup-s", type=float, default=1.5)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    values = torch.randn(2_000_000)
    started = time.thread_time()
    while time.thread_time() - started < args.startup_s:
        torch.sort(values)  # start-up only
    sort_s = time.thread_time() - started
    data = TensorDataset(torch.randn(args.steps * 32, 512))
    weight = torch.randn(512, 512)
    steps = 0
    # the worker far ahead (its batches are slices): on a loaded machine the loop still
    # computes rather than waits, and the verdict stays compute-bound
    for (batch,) in DataLoader(data, batch_size=32, num_workers=1, prefetch_factor=16):
        for _ in range(40):
            batch = torch.tanh(batch @ weight)
        steps += 1
    print(json.dumps({"sort_s": sort_s, "steps": steps}))


if __name__ == "__main__":
    main()
