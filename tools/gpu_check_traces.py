"""What tools/gpu-check reads from a workload's traces: the report's JSON,
and device memory recomputed from the records themselves, split into what
PyTorch's allocator took (call stacks through libc10_cuda) and the rest."""
import json
import os
import re
import subprocess
import tempfile

_reports = {}

ALLOC = re.compile(r"^\d+ \+([\d.]+) tid=\d+ gpu_(alloc|free) (\w+) (\w+(?: host)?) ptr=(0x[0-9a-f]+) "
                   r"bytes=(\d+) stream=\d+( nested)?( failed)? dur_ns=(\d+)(?: stack=\"(.*)\")?$")
LIBRARY = re.compile(r"\(([^()]+\.so[^()]*)\)")
CUDA_LIBRARIES = ("libcudart", "libcuda.", "libprofinject")


def report_of(analyzer, traces):
    """The analyzer's JSON report of @traces (cached)."""
    if traces not in _reports:
        path = os.path.join(tempfile.mkdtemp(), "report.json")
        subprocess.run([analyzer, traces, "--quiet", "--json", path], check=True,
                       capture_output=True)
        with open(path) as f:
            _reports[traces] = json.load(f)
    return _reports[traces]


def normalised(name):
    return re.sub(r"\s+", "", name)


def kernel_totals(report):
    """GPU time per kernel (name without spaces -> ns), as the report gives it."""
    return {normalised(e["name"]): e["total_ns"] for e in report["latency"]
            if e["group"] == "gpu" and e["class"] == "kernel"}


def launches(report, name):
    """Launches of the kernels named @name or whose name starts with it (a
    template's return type aside: "void reduce<float>(...)" for "reduce")."""
    return sum(e["count"] for e in report["latency"]
               if e["group"] == "kernel" and re.sub(r"^void ", "", e["name"]).startswith(name))


def _caller(stack):
    """The first library in a call stack that is not CUDA's or ours."""
    for library in LIBRARY.findall(stack or ""):
        if not library.startswith(CUDA_LIBRARIES):
            return library
    return "(no call stack)"


def _records(analyzer, traces):
    """Device allocations and frees of the process that made most, in time order
    (an allocation by its end, a free by its start, as the analyzer orders them)."""
    best = []
    for name in os.listdir(traces):
        text = subprocess.run([analyzer, "dump", os.path.join(traces, name)], check=True,
                              capture_output=True, text=True).stdout
        found = []
        for line in text.splitlines():
            m = ALLOC.match(line)
            # a nested call is counted by its caller's; a failed one took nothing
            if not m or m.group(7) or m.group(8) or m.group(4) in ("pinned host", "registered host"):
                continue
            start_ns = round(float(m.group(1)) * 1e9)
            is_alloc = m.group(2) == "alloc"
            key = start_ns + int(m.group(9)) if is_alloc else start_ns
            found.append((key, is_alloc, int(m.group(5), 16), int(m.group(6)), m.group(10)))
        if len(found) > len(best):
            best = found
    return sorted(best, key=lambda r: (r[0], r[1]))


def first_difference(analyzer, traces_a, traces_b):
    """The first device allocation where two runs of one job part ways:
    (index, (bytes, call stack) of a, of b), or None when they agree."""
    def allocations(traces):
        return [(size, stack or "") for _, is_alloc, _, size, stack in _records(analyzer, traces)
                if is_alloc]
    a, b = allocations(traces_a), allocations(traces_b)
    for i, (x, y) in enumerate(zip(a, b)):
        if x[0] != y[0]:
            return i, x, y
    if len(a) != len(b):
        i = min(len(a), len(b))
        return i, a[i] if i < len(a) else None, b[i] if i < len(b) else None
    return None


def device_memory(analyzer, traces):
    """Peaks of device memory, in all and of PyTorch's allocator, recomputed from the records."""
    if not os.path.isdir(traces) or not os.listdir(traces):
        return None
    live, total, pytorch = {}, 0, 0
    peak, pytorch_peak, frees, unmatched, at_peak = 0, 0, 0, 0, {}
    for _, is_alloc, pointer, size, stack in _records(analyzer, traces):
        if is_alloc:
            ours = "libc10_cuda" in (stack or "")
            live[pointer] = (size, ours, _caller(stack))
            total += size
            pytorch += size if ours else 0
        else:
            frees += 1
            if pointer not in live:
                unmatched += 1
                continue
            size, ours, _ = live.pop(pointer)
            total -= size
            pytorch -= size if ours else 0
        pytorch_peak = max(pytorch_peak, pytorch)
        if total > peak:
            peak = total
            at_peak = {}
            for size, ours, caller in live.values():
                if not ours:
                    at_peak[caller] = at_peak.get(caller, 0) + size
    return {"peak": peak, "pytorch_peak": pytorch_peak, "outside": at_peak, "frees": frees,
            "unmatched_frees": unmatched}
