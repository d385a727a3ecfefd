"""A training loop that waits for its data: a torch DataLoader with two
worker processes whose samples take 20 ms each, read by a loop that does
no work. The loop's `for` line is marked ("# site: loader"); the report
must say the training loop waits there."""
import time

import torch
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, index):
        time.sleep(0.02)
        return torch.full((4,), float(index))


def train(loader):
    total = 0.0
    for batch in loader:  # site: loader
        total += float(batch.sum())
    return total


if __name__ == "__main__":
    loader = DataLoader(SlowDataset(), batch_size=2, num_workers=2)
    print("ok" if train(loader) == sum(range(16)) * 4 else "wrong sum")
