"""A DDP training job on CPU ranks (gloo), launched by torchrun.

One rank can be slowed by a known sleep per step (--slow-rank, --slow-ms),
so a test knows the straggler and its delay. Each rank writes its own truth
(steps run, the sleep it added per step, its step and backward
times: a rank's backward holds its wait for the others' gradients) to --truth DIR as
rank<N>.json, from its own clock, for the test to compare with the report.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset


class Batches(Dataset):
    def __init__(self, count, features):
        self.count, self.features = count, features

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        x = torch.randn(self.features, generator=g)
        return x, x.sum().unsqueeze(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--slow-ms", type=float, default=0.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--truth", default=None)
    args = parser.parse_args()

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 1))
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.001)
    batch = 16
    loader = DataLoader(Batches(args.steps * batch, 256), batch_size=batch,
                        num_workers=args.workers)
    slow = args.slow_ms / 1000.0 if rank == args.slow_rank else 0.0
    step_times, backward_times = [], []
    last = time.monotonic()
    for x, y in loader:
        if slow:
            time.sleep(slow)  # this rank's own work, longer than the others'
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        optimizer.zero_grad()
        before = time.monotonic()
        loss.backward()  # DDP all-reduces the gradients here, across all ranks
        backward_times.append(time.monotonic() - before)
        optimizer.step()
        now = time.monotonic()
        step_times.append(now - last)
        last = now
    dist.barrier()
    if args.truth:
        with open(os.path.join(args.truth, f"rank{rank}.json"), "w") as f:
            json.dump({"rank": rank, "world": world, "steps": len(step_times),
                       "slow_ms": slow * 1000.0, "step_s": step_times,
                       "backward_s": backward_times}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
