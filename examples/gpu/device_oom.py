#!/usr/bin/env python3
"""A job that runs the device out of memory: it keeps --gib GiB a step
until PyTorch raises torch.OutOfMemoryError, then dies of it (exit 1), as
a leak in a training loop does. Its truths: the request that failed, what
PyTorch held then (memory_reserved), the device's capacity
(total_memory) and the steps kept.

    python3 examples/gpu/device_oom.py --gib 4 --truths truths.json
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truths as job_truths  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=int, default=4)
    job_truths.add_arguments(parser)
    args = parser.parse_args()
    request = args.gib << 30
    kept = []
    truths = {"request_bytes": request,
              "total_memory": torch.cuda.get_device_properties(0).total_memory}
    try:
        while True:
            kept.append(torch.empty(request, dtype=torch.uint8, device=args.device))
    except torch.OutOfMemoryError:
        truths.update(steps=len(kept), memory_reserved=torch.cuda.memory_reserved(),
                      max_memory_reserved=torch.cuda.max_memory_reserved())
        job_truths.write(args, truths)
        raise


if __name__ == "__main__":
    main()
