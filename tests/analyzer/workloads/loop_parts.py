"""What the DataLoader workloads share: a dataset of numbered rows, and
computing for a while by the wall clock."""
import time

import torch
from torch.utils.data import Dataset


class Numbers(Dataset):
    """@rows rows of 64 floats, row i all i; @delays: row -> seconds it takes to load"""

    def __init__(self, rows, delays=None):
        self.rows, self.delays = rows, delays or {}

    def __len__(self):
        return self.rows

    def __getitem__(self, i):
        if i in self.delays:
            time.sleep(self.delays[i])
        return torch.full((64,), float(i))


def compute(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
