"""A DataLoader training loop (2 workers) whose steps compute about 5 ms
each, except step SLOW (from 1), which computes 150 ms more. Prints what it
did as JSON: its step count and its slow step.

Usage: slow_step_loop.py STEPS SLOW"""
import json
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

steps, slow = int(sys.argv[1]), int(sys.argv[2])


class Numbers(Dataset):
    def __len__(self):
        return steps * 4

    def __getitem__(self, i):
        return torch.full((64,), float(i))


def compute(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


if __name__ == "__main__":
    done = 0
    for batch in DataLoader(Numbers(), batch_size=4, num_workers=2):
        done += 1
        compute(0.005 + (0.150 if done == slow else 0))
    print(json.dumps({"steps": done, "slow": slow}))
