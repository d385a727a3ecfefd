"""What a GPU workload says about itself, for tools/gpu-check to compare
with the profiler's report: PyTorch's own memory figures, torch.profiler's
GPU time per kernel, step and launch counts. Each workload writes them as
JSON to the path given with --truths.

Runs on PyTorch 2.x: on the GPU machines, and here with --device cpu (the
project's Python, where the scripts are smoke-tested)."""
import contextlib
import json

import torch


def add_arguments(parser):
    parser.add_argument("--device", default="cuda", help="cuda, or cpu to try the script out")
    parser.add_argument("--truths", help="write the workload's own figures here (JSON)")
    parser.add_argument("--torch-profiler", action="store_true",
                        help="run under torch.profiler and keep its GPU time per kernel")


@contextlib.contextmanager
def profiled(args, truths):
    """Run the body under torch.profiler when asked; its GPU work goes into
    @truths["kernels"]: name -> {"count", "total_ns"}, as CUPTI named it."""
    if not args.torch_profiler:
        yield
        return
    activities = [torch.profiler.ProfilerActivity.CPU]
    if args.device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        yield
    if args.device == "cuda":
        torch.cuda.synchronize()
    truths["kernels"] = gpu_kernels(prof)


def gpu_kernels(prof):
    """GPU work (kernels, copies, sets) by name from a finished profile."""
    kernels = {}
    for event in prof.events():
        device_type = getattr(event, "device_type", None)
        if device_type is None or "CUDA" not in str(device_type):
            continue
        # a record_function range drawn on the GPU's timeline (PyTorch 2.x names
        # the optimizer's step so): it spans kernels, it is none
        if getattr(event, "is_user_annotation", False):
            continue
        entry = kernels.setdefault(event.name, {"count": 0, "total_ns": 0})
        entry["count"] += 1
        # a device event's time range is when the GPU ran it (microseconds)
        entry["total_ns"] += int(round(event.time_range.elapsed_us() * 1000))
    return kernels


def memory(args, truths):
    """PyTorch's own figures of its allocator, for the device in use."""
    if args.device != "cuda":
        return
    torch.cuda.synchronize()
    truths["max_memory_reserved"] = torch.cuda.max_memory_reserved()
    truths["max_memory_allocated"] = torch.cuda.max_memory_allocated()
    truths["allocator"] = torch.cuda.get_allocator_backend() \
        if hasattr(torch.cuda, "get_allocator_backend") else "native"


def write(args, truths):
    if args.truths:
        with open(args.truths, "w") as f:
            json.dump(truths, f, indent=1, sort_keys=True)
