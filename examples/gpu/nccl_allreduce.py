#!/usr/bin/env python3
"""NCCL at world size 1: one process group of one rank (backend "nccl",
gloo with --device cpu), --calls all-reduces and broadcasts of a 4 MiB
tensor, as DDP makes them. What NCCL launches on the GPU and its GPU time,
torch.profiler's against the profiler's.

    python3 examples/gpu/nccl_allreduce.py --calls 200 --truths truths.json
"""
import argparse
import os
import socket
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truths as job_truths  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    job_truths.add_arguments(parser)
    args = parser.parse_args()
    device = torch.device(args.device)
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo",
                            init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    tensor = torch.ones(1 << 20, device=device)
    for _ in range(3):  # the communicator and its buffers are made at the first collective
        dist.all_reduce(tensor)
    if args.device == "cuda":
        torch.cuda.synchronize()
    truths = {"calls": args.calls, "all_reduce": args.calls, "broadcast": args.calls,
              "warmup_all_reduce": 3, "tensor_bytes": tensor.numel() * tensor.element_size()}
    with job_truths.profiled(args, truths):
        for _ in range(args.calls):
            dist.all_reduce(tensor)
            dist.broadcast(tensor, src=0)
        if args.device == "cuda":
            torch.cuda.synchronize()
    truths["value"] = float(tensor[0])
    job_truths.memory(args, truths)
    job_truths.write(args, truths)
    dist.destroy_process_group()
    print(f"{args.calls} all-reduces and broadcasts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
