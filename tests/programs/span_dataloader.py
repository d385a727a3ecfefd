"""A torch DataLoader read by hand, each next() timed by the job's own clock.

Two loaders over the same 12 samples (0.5 ms each to make), in batches of 2: one read in
the main process (num_workers=0), then one with two worker processes (num_workers=2);
each for 3 epochs. Each epoch takes a new iterator and calls next() on it until it
raises StopIteration: 6 batches, then the call that raises. Each call is timed with
perf_counter around it, and whether the thread was made to wait for a CPU meanwhile (an
involuntary context switch: the clocks may then differ by that). Each batch is checked
against the samples it should hold.

Prints one JSON line: the job's pid, and for each loader (by its number of workers) its
epochs, batches per epoch, and its calls in order: seconds, raised, preempted."""
import gc
import json
import os
import resource
import time

import torch
from torch.utils.data import DataLoader, Dataset

SAMPLES, BATCH, EPOCHS = 12, 2, 3


class Samples(Dataset):
    def __len__(self):
        return SAMPLES

    def __getitem__(self, index):
        time.sleep(0.0005)
        return torch.full((4,), float(index))


def switches():
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw


def read(workers):
    loader = DataLoader(Samples(), batch_size=BATCH, num_workers=workers)
    calls, right = [], True
    for _ in range(EPOCHS):
        it = iter(loader)
        index = 0
        while True:
            before = switches()
            start = time.perf_counter()
            try:
                batch = next(it)
            except StopIteration:
                took = time.perf_counter() - start
                calls.append({"seconds": took, "raised": True, "preempted": switches() != before})
                break
            took = time.perf_counter() - start
            calls.append({"seconds": took, "raised": False, "preempted": switches() != before})
            expected = torch.arange(index, index + BATCH, dtype=torch.float32)
            right &= bool(torch.equal(batch, expected.unsqueeze(1).expand(BATCH, 4)))
            index += BATCH
            del batch  # freed here, not inside the next call's clock
        right &= index == SAMPLES
        del it  # its workers shut down here, outside every clock
    return {"epochs": EPOCHS, "batches": SAMPLES // BATCH, "calls": calls, "right": right}


def main():
    torch.set_num_threads(1)
    # a collection set off by the call's arguments would fall between the two clocks
    gc.collect()
    gc.disable()
    loaders = {str(workers): read(workers) for workers in (0, 2)}
    print(json.dumps({"pid": os.getpid(), "loaders": loaders}))


if __name__ == "__main__":
    main()
