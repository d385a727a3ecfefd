"""A job whose threads sit in known lines, for `profinject stacks`: the main
thread counts in progress(), a thread waits for a lock in waiter(), one
sleeps in sleeper(), a thread that runs no Python, "native-pause", waits in
the C library's pause(), and a DataLoader worker sleeps in
Files.__getitem__.
It prints "ready PID" once all are there, then runs until its stdin closes,
and prints as JSON the longest gap between two of its main loop's turns
within each span of CLOCK_MONOTONIC that stdin's lines named ("span A B",
in ns), with the number of turns: what a pause of its Python code cost it.

Usage: stacks_job.py"""
import ctypes
import json
import os
import select
import signal
import sys
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset

lock = threading.Lock()
lock.acquire()


def waiter():
    lock.acquire()  # blocked here


def sleeper():
    while True:
        time.sleep(0.05)  # asleep here


class Files(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(60)  # the worker sleeps here
        return torch.zeros(1)


def progress(turns):
    """Turns of the main loop, until stdin closes: their CLOCK_MONOTONIC times."""
    check = time.monotonic_ns() + 10_000_000
    while True:  # the main thread counts here
        now = time.monotonic_ns()
        turns.append(now)
        if now >= check:
            check = now + 10_000_000
            if select.select([sys.stdin], [], [], 0)[0]:
                line = sys.stdin.readline()
                if not line:
                    return
                spans.append([int(x) for x in line.split()[1:3]])  # the loop ends here


spans = []
threading.Thread(target=waiter, name="waiter", daemon=True).start()
threading.Thread(target=sleeper, name="sleeper", daemon=True).start()
libc = ctypes.CDLL(None)
native = ctypes.c_ulong()
assert libc.pthread_create(ctypes.byref(native), None, libc.pause, None) == 0
libc.pthread_setname_np(native, b"native-pause")
batches = iter(DataLoader(Files(), num_workers=1))  # its worker starts on sample 0
time.sleep(1.0)  # the worker in its sleep, every socket made
print("ready", os.getpid(), flush=True)
turns = []
progress(turns)
gaps = []
for start, end in spans:
    inside = [t for t in turns if start <= t <= end]
    gaps.append({"max_gap_ns": max((b - a for a, b in zip(inside, inside[1:])), default=0),
                 "turns": len(inside)})
print(json.dumps({"spans": gaps}), flush=True)
for worker in batches._workers:  # asleep for a minute: not waited for
    os.kill(worker.pid, signal.SIGKILL)
os._exit(0)
