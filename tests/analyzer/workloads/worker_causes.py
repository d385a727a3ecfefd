"""A loop starved by its DataLoader workers for one cause at a time: each
sample sleeps, reads a large file, or computes in __getitem__. The workers
time their own work (perf_counter around the sleep and the read, their CPU
clock around the computing: on a busy machine, reading the running thread's
CPU clock makes the kernel account it then, and a thread whose slice is spent
is preempted as that call returns, so the workers wait for a CPU on the line
after spin() and the profiler's samples are often served there; the report
weighs computing workers' lines by their CPU for that reason) and hand their running totals back with each
sample; the loop times its own steps and its waits in next(). After each
epoch's last batch the loop computes LAST_STEP_S more before it asks for the
end, so the workers wait that long to be told to stop: that wait is not
their work. Prints as JSON the pid, the steps, each worker's totals and
life, and the loop's clocks.

Usage: worker_causes.py sleep|read|compute STEPS WORKERS DATA_FILE [EPOCHS]"""
import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info

from loop_parts import compute

cause, steps, workers, data_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
epochs = int(sys.argv[5]) if len(sys.argv) > 5 else 1  # each epoch starts its own workers
BATCH = 4
READ_BYTES = 32 << 20
LAST_STEP_S = 0.3
timers = {"start": 0.0, "end": 0.0, "work": 0.0}
buffer = bytearray(READ_BYTES) if cause == "read" else None


def started(_):
    timers["start"] = time.perf_counter()


def spin(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


class Causes(Dataset):
    def __len__(self):
        return steps * BATCH // epochs

    def __getitem__(self, i):
        if cause == "sleep":
            at = time.perf_counter()
            time.sleep(0.02)
            timers["work"] += time.perf_counter() - at
        elif cause == "read":
            at = time.perf_counter()
            with open(data_file, "rb", buffering=0) as f:
                f.readinto(buffer)
            timers["work"] += time.perf_counter() - at
        else:
            at = time.thread_time()
            spin(100000)
            timers["work"] += time.thread_time() - at
        timers["end"] = time.perf_counter()
        return torch.zeros(4), get_worker_info().id, dict(timers)


if __name__ == "__main__":
    if cause == "read" and not os.path.exists(data_file):
        with open(data_file, "wb") as f:
            f.write(os.urandom(READ_BYTES))
    loader = DataLoader(Causes(), batch_size=BATCH, num_workers=workers, worker_init_fn=started)
    last = {}
    waited = own = 0.0
    for epoch in range(epochs):
        batches = iter(loader)
        taken = 0
        while True:
            at = time.perf_counter()
            try:
                _, ids, totals = next(batches)
            except StopIteration:
                break
            got = time.perf_counter()
            waited += got - at
            for k, worker in enumerate(ids.tolist()):
                last[worker] = {name: float(totals[name][k]) for name in totals}
            taken += 1
            compute(0.002 + (LAST_STEP_S if taken == len(loader) else 0))
            own += time.perf_counter() - got
    print(json.dumps({"pid": os.getpid(), "steps": steps, "workers": last,
                      "loop_wait_s": waited, "loop_own_s": own}))
