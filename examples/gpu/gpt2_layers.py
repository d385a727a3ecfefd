#!/usr/bin/env python3
"""A GPT-2-shaped model from a transformers GPT2Config (no download), trained
for --steps steps on fixed random tokens: bf16 autocast, fused AdamW. What
tools/gpu-check compares the module table and the GEMM figures against.

    python3 examples/gpu/gpt2_layers.py --steps 30 --truths truths.json
    python3 examples/gpu/gpt2_layers.py --steps 30 --torch-profiler [OUT.json]
    python3 examples/gpu/gpt2_layers.py --flop-counter [OUT.json]

Plain: run (under the profiler); the truths hold the steps, the parameter
count, the tokens per step and the mean time of a step after the first
three (synchronised), PyTorch's memory figures.
--torch-profiler: the same steps under torch.profiler (CPU and CUDA, with
stacks and modules); the truths add each kernel's GPU time by the nn.Module
path of the operator that launched it ("GPT2LMHeadModel/GPT2Model/GPT2Block/
GPT2MLP", each path holding its own modules' time, as the report's rows
do), the backward pass's by autograd node (the autograd::engine::
evaluate_function range around the operator), the optimizer's step apart.
--flop-counter: one step (after one of warm-up) under
torch.utils.flop_counter.FlopCounterMode: the FLOPs of aten.mm, aten.addmm,
aten.bmm and aten.baddbmm in it (the GEMMs), and 6 x parameters x tokens.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truths as job_truths  # noqa: E402

MODULE = "nn.Module: "
NODE = "autograd::engine::evaluate_function: "
OPTIMIZER = "Optimizer.step#"
GEMMS = ("mm", "addmm", "bmm", "baddbmm")
WARM_UP = 3  # steps before the step time is measured: cuBLAS's choices, the allocator's growth


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--embd", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--device", default="cuda", help="cuda, or cpu to try the script out")
    parser.add_argument("--truths", help="write the workload's own figures here (JSON)")
    parser.add_argument("--torch-profiler", nargs="?", const="", metavar="OUT.json",
                        help="run under torch.profiler: GPU time by module path and autograd "
                             "node (into OUT.json, and the truths)")
    parser.add_argument("--flop-counter", nargs="?", const="", metavar="OUT.json",
                        help="one step under FlopCounterMode: GEMM FLOPs per step (into "
                             "OUT.json, and the truths)")
    return parser.parse_args()


def build(args):
    import transformers
    config = transformers.GPT2Config(n_layer=args.layers, n_embd=args.embd, n_head=args.heads,
                                     n_positions=args.seq, vocab_size=50257)
    config._attn_implementation = "sdpa"
    model = transformers.GPT2LMHeadModel(config).to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=args.device == "cuda")
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, config.vocab_size, (args.batch, args.seq), generator=generator)
    return model, optimizer, tokens.to(args.device)


def step(model, optimizer, tokens, device):
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        loss = model(input_ids=tokens, labels=tokens).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def train(args, model, optimizer, tokens):
    """@args.steps steps; the mean time of those after the first WARM_UP, in ns (None if none)"""
    started = None
    for i in range(args.steps):
        if i == WARM_UP:
            synchronize(args.device)
            started = time.perf_counter_ns()
        step(model, optimizer, tokens, args.device)
    synchronize(args.device)
    measured = args.steps - WARM_UP
    return (time.perf_counter_ns() - started) / measured if measured > 0 else None


def places(events):
    """For each operator event with kernels: the ranges around it on its thread, outermost
    first (nn.Module calls, evaluate_function of autograd nodes, the optimizer's step). This
    build of torch.profiler leaves the operators' stacks empty, so the ranges are found by
    time: those of one thread nest, and a sweep in order of start keeps the open ones."""
    ranges = (MODULE, NODE, OPTIMIZER)
    by_thread = {}
    for e in events:
        is_range = e.name.startswith(ranges)
        if is_range or (getattr(e, "kernels", None) and str(e.device_type) == "DeviceType.CPU"):
            by_thread.setdefault(e.thread, []).append(e)
    for items in by_thread.values():
        # outer before inner at one start: the longer first
        items.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
        open_ranges = []
        for e in items:
            while open_ranges and open_ranges[-1].time_range.end < e.time_range.end and \
                    open_ranges[-1].time_range.end <= e.time_range.start:
                open_ranges.pop()
            while open_ranges and open_ranges[-1].time_range.end < e.time_range.end:
                open_ranges.pop()  # overlapping without nesting (clock rounding): not around it
            if e.name.startswith(ranges):
                open_ranges.append(e)
            else:
                yield e, [r.name for r in open_ranges]


def gpu_time_by_place(prof):
    """GPU time (ns) by module path (each ancestor included), by autograd node, of the
    optimizer's steps and outside all three, from the operators' kernels"""
    modules, backward = {}, {}
    optimizer, outside, total = {}, 0, 0
    for e, around in places(prof.events()):
        ns = sum(int(round(k.duration * 1000)) for k in e.kernels)
        total += ns
        classes = [r[len(MODULE):].rsplit("_", 1)[0] for r in around if r.startswith(MODULE)]
        # "torch::autograd::AccumulateGrad" as the report names it, "AccumulateGrad"
        nodes = [r[len(NODE):].replace("torch::autograd::", "") for r in around
                 if r.startswith(NODE)]
        steps = [r[len(OPTIMIZER):] for r in around if r.startswith(OPTIMIZER)]
        if classes:
            for depth in range(len(classes)):
                key = "/".join(classes[:depth + 1])
                modules[key] = modules.get(key, 0) + ns
        elif nodes:  # the innermost node: the one whose apply launched it
            backward[nodes[-1]] = backward.get(nodes[-1], 0) + ns
        elif steps:
            key = f"{steps[0]} (optimizer)"  # "AdamW.step (optimizer)", as the report names it
            optimizer[key] = optimizer.get(key, 0) + ns
        else:
            outside += ns
    return {"gpu_ns": total, "modules": modules, "backward_nodes": backward,
            "backward_ns": sum(backward.values()), "optimizer": optimizer, "outside_ns": outside}


def profiled(args, model, optimizer, tokens):
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    if args.device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    # torch 2.13 (CPU build, here) now and then hands an event name that is not UTF-8 to
    # its own parser, which raises: the steps are profiled again, at most three times
    for attempt in range(1, 4):
        with profile(activities=activities, with_stack=True, with_modules=True) as prof:
            train(args, model, optimizer, tokens)
        try:
            figures = gpu_time_by_place(prof)
        except UnicodeDecodeError as e:
            print(f"gpt2_layers: torch.profiler's events unreadable ({e}), again",
                  file=sys.stderr)
            continue
        figures["kernels"] = job_truths.gpu_kernels(prof)
        figures["profiled_attempts"] = attempt
        return figures
    raise SystemExit("gpt2_layers: torch.profiler's events unreadable three times")


def flop_count(args, model, optimizer, tokens):
    from torch.utils.flop_counter import FlopCounterMode
    step(model, optimizer, tokens, args.device)  # warm-up: lazy state (AdamW's) made outside
    counter = FlopCounterMode(display=False)
    with counter:
        step(model, optimizer, tokens, args.device)
    by_op = {str(op).split(".")[-1]: n for op, n in counter.get_flop_counts()["Global"].items()}
    gemm = {op: by_op.get(op, 0) for op in GEMMS if op in by_op}
    return {"gemm_flops_per_step": sum(gemm.values()), "gemm_flops_by_op": gemm,
            "flops_by_op": by_op, "total_flops_per_step": counter.get_total_flops()}


def write(path, figures):
    if path:
        with open(path, "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)


def main():
    args = arguments()
    try:
        import transformers  # noqa: F401
    except ImportError:
        print("gpt2_layers: transformers is not installed", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    model, optimizer, tokens = build(args)
    params = sum(p.numel() for p in model.parameters())
    truths = {"params": params, "tokens_per_step": tokens.numel(), "steps": args.steps}
    if args.flop_counter is not None:
        figures = flop_count(args, model, optimizer, tokens)
        figures["flops_6nd_per_step"] = 6 * params * tokens.numel()
        write(args.flop_counter, figures)
        truths.update(figures, steps=2)
    elif args.torch_profiler is not None:
        figures = profiled(args, model, optimizer, tokens)
        write(args.torch_profiler, figures)
        truths.update(figures)
    else:
        truths["step_ns"] = train(args, model, optimizer, tokens)
    job_truths.memory(args, truths)
    job_truths.write(args, truths)
    print(f"gpt2_layers: {params} parameters, {truths['steps']} steps of "
          f"{tokens.numel()} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
