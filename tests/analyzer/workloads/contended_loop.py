"""A DataLoader training loop (2 workers) pinned to one CPU with two busy
processes beside it (not traced), so that its main thread is often ready to
run and not running. Each step computes for 10 ms of wall time. Prints as
JSON its step count and the main thread's own CPU clock
(time.thread_time_ns) at each batch's arrival and at the loop's end, with
the monotonic clock (time.monotonic_ns) read beside it.

Usage: contended_loop.py STEPS"""
import json
import os
import subprocess
import sys
import time
import warnings

warnings.filterwarnings("ignore", "This DataLoader will create")  # one CPU: by design
CPU = min(os.sched_getaffinity(0))
os.sched_setaffinity(0, {CPU})
HOG = f"import os\nos.sched_setaffinity(0, {{{CPU}}})\nwhile True:\n    pass\n"
untraced = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
hogs = [subprocess.Popen([sys.executable, "-c", HOG], env=untraced) for _ in range(2)]

from torch.utils.data import DataLoader  # noqa: E402  (after the hogs: not the job's children)

from loop_parts import Numbers, compute  # noqa: E402

steps = int(sys.argv[1])
BATCH = 4


if __name__ == "__main__":
    try:
        clock, wall = [], []
        for batch in DataLoader(Numbers(steps * BATCH), batch_size=BATCH, num_workers=2):
            clock.append(time.thread_time_ns())
            wall.append(time.monotonic_ns())
            compute(0.010)
        clock.append(time.thread_time_ns())
        wall.append(time.monotonic_ns())
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(json.dumps({"steps": len(clock) - 1, "cpu_ns_at_receipts": clock,
                      "monotonic_ns_at_receipts": wall}))
