#!/usr/bin/env python3
"""A training step of a small MLP captured once as a CUDA graph, then
replayed --replays times (static input, as torch.cuda.graphs documents).

    python3 examples/gpu/cuda_graph.py --replays 200 --truths truths.json
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truths as job_truths  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=200)
    job_truths.add_arguments(parser)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    static_x = torch.randn(256, 1024, device=device)
    static_y = torch.randint(0, 10, (256,), device=device)

    def step():
        optimizer.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(model(static_x), static_y)
        loss.backward()
        optimizer.step()
        return loss

    truths = {"replays": args.replays}
    if args.device != "cuda":  # no graphs without a GPU: the step runs eagerly
        with job_truths.profiled(args, truths):
            for _ in range(args.replays):
                step()
        job_truths.write(args, truths)
        return 0
    side = torch.cuda.Stream()  # warm up on a side stream before capture
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = step()
    torch.cuda.synchronize()
    with job_truths.profiled(args, truths):
        for _ in range(args.replays):
            graph.replay()
        torch.cuda.synchronize()
    truths["loss"] = float(static_loss)
    job_truths.memory(args, truths)
    job_truths.write(args, truths)
    print(f"{args.replays} replays")
    return 0


if __name__ == "__main__":
    sys.exit(main())
