"""A DataLoader training loop (2 workers) whose steps compute about 5 ms
each, except step SLOW (from 1), which computes 150 ms more. With "late",
the slow step's batch takes 100 ms to load, so the next batch (the other
worker's) comes first: the loop reads both at once and keeps the early one.
Prints what it did as JSON: its step count and its slow step.

Usage: slow_step_loop.py STEPS SLOW [late]"""
import json
import sys

from torch.utils.data import DataLoader

from loop_parts import Numbers, compute

steps, slow = int(sys.argv[1]), int(sys.argv[2])
late = sys.argv[3:] == ["late"]
BATCH = 4


if __name__ == "__main__":
    done, kept_early = 0, 0
    rows = Numbers(steps * BATCH, {(slow - 1) * BATCH: 0.1} if late else None)
    batches = iter(DataLoader(rows, batch_size=BATCH, num_workers=2))
    for batch in batches:
        done += 1
        if done == slow:  # batches that came before this one, kept for their steps
            kept_early = sum(len(task) == 2 for task in batches._task_info.values())
        compute(0.005 + (0.150 if done == slow else 0))
    print(json.dumps({"steps": done, "slow": slow, "kept_early": kept_early}))
