#!/usr/bin/env python3
"""A launch-bound loop: x.add_(1) on 1024 floats, --ops times, timed from
the host. Prints {"us_per_op": ...}; what a profiler adds per launch shows
up here undiluted.

    python3 examples/gpu/tiny_ops.py --ops 200000
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truths as job_truths  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200000)
    job_truths.add_arguments(parser)
    args = parser.parse_args()
    x = torch.zeros(1024, device=args.device)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    for _ in range(1000):  # warm up
        x.add_(1)
    sync()
    truths = {}
    with job_truths.profiled(args, truths):
        start = time.perf_counter()
        for _ in range(args.ops):
            x.add_(1)
        sync()
        elapsed = time.perf_counter() - start
    truths["us_per_op"] = elapsed / args.ops * 1e6
    truths.pop("kernels", None)  # a profile of 200 k launches is not wanted here
    job_truths.write(args, truths)
    print(json.dumps({"us_per_op": truths["us_per_op"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
