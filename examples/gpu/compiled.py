#!/usr/bin/env python3
"""torch.compile of a fused element-wise reduction, called --calls times
after 3 warm-up calls: each call launches one Triton kernel through the
driver API.

    python3 examples/gpu/compiled.py --calls 500 --truths truths.json
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truths as job_truths  # noqa: E402

WARMUP = 3


def fused(x, y):
    return torch.nn.functional.gelu(x * y + 1.0).sum(dim=-1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--size", type=int, default=2048)
    job_truths.add_arguments(parser)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.size, args.size, device=args.device)
    y = torch.randn(args.size, args.size, device=args.device)
    # torch 1.13 (the CPU smoke test) has no torch.compile: the body runs as written
    compiled = torch.compile(fused) if hasattr(torch, "compile") else fused
    truths = {"calls": WARMUP + args.calls}
    for _ in range(WARMUP):
        compiled(x, y)
    with job_truths.profiled(args, truths):
        for _ in range(args.calls):
            out = compiled(x, y)
        if args.device == "cuda":
            torch.cuda.synchronize()
    truths["checksum"] = float(out.sum())
    job_truths.memory(args, truths)
    job_truths.write(args, truths)
    print(f"{WARMUP + args.calls} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
