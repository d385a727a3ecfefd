#!/usr/bin/env python3
"""NCCL across two processes on one node, one GPU each (gloo on the CPU
with --device cpu): the script starts its two ranks itself, as torchrun
would, and each makes --calls all-reduces of a --numel float32 tensor after
3 of warm-up. The truths are what the ranks did: calls and bytes per rank,
what tools/gpu-check holds each rank's collective table to.

    python3 examples/gpu/nccl_two_ranks.py --calls 100 --truths truths.json
"""
import argparse
import json
import os
import socket
import subprocess
import sys

WARMUP = 3  # the communicator and its buffers are made at the first collective


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(args):
    import torch
    import torch.distributed as dist
    rank = int(os.environ["RANK"])
    device = torch.device(f"cuda:{rank}" if args.device == "cuda" else "cpu")
    if args.device == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo", rank=rank, world_size=2)
    tensor = torch.ones(args.numel, dtype=torch.float32, device=device)
    for _ in range(WARMUP + args.calls):
        dist.all_reduce(tensor)
    if args.device == "cuda":
        torch.cuda.synchronize()
    value = float(tensor[0])  # 2 ** (WARMUP + calls) from ones on two ranks
    dist.destroy_process_group()
    return {"rank": rank, "pid": os.getpid(), "all_reduce": WARMUP + args.calls,
            "bytes_each": tensor.numel() * tensor.element_size(), "value": value}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--numel", type=int, default=1 << 20)
    parser.add_argument("--device", default="cuda", help="cuda, or cpu to try the script out")
    parser.add_argument("--truths", help="write the ranks' own figures here (JSON)")
    parser.add_argument("--rank-out", help=argparse.SUPPRESS)  # set for the ranks
    args = parser.parse_args()
    if args.rank_out:
        with open(args.rank_out, "w") as f:
            json.dump(rank_main(args), f)
        return 0
    port, outs, ranks = free_port(), [], []
    for rank in range(2):
        outs.append(f"{args.truths or 'nccl_two_ranks'}.rank{rank}")
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        command = [sys.executable, os.path.abspath(__file__), "--calls", str(args.calls),
                   "--numel", str(args.numel), "--device", args.device, "--rank-out", outs[-1]]
        ranks.append(subprocess.Popen(command, env=env))
    if any(p.wait() != 0 for p in ranks):
        print("a rank failed", file=sys.stderr)
        return 1
    truths = {"ranks": []}
    for path in outs:
        with open(path) as f:
            truths["ranks"].append(json.load(f))
        os.unlink(path)
    if args.truths:
        with open(args.truths, "w") as f:
            json.dump(truths, f)
    print(f"2 ranks, {args.calls} all-reduces each after {WARMUP} of warm-up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
