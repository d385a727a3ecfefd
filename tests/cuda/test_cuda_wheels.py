#!/usr/bin/env python3
"""The CUDA 13 stack of the pip wheels, on a machine without a GPU: the
CUDA build of torch and its nvidia-* wheels (libcudart.so.13,
libcupti.so.13, libnccl.so.2, cuBLAS, cuDNN) under the preload.

- torch imports, says CUDA is unavailable and trains on the CPU exactly as
  without the preload;
- the trace says which runtime and CUPTI the hooks found, and that there is
  no device or driver, once;
- every entry point of the import surface that does device work (allocates,
  frees, maps, launches, copies, sets memory, synchronises, records or waits
  on events, captures graphs) is hooked by libprofinject.so or listed, with
  the reason it need not be, in docs/cuda-entry-points.md;
- every nccl* entry libtorch_cuda.so imports from libnccl.so.2 is hooked by
  libprofinject.so or listed, with the reason it need not be, in
  docs/nccl-entry-points.md;
- the real libnccl.so.2 loads and answers as without the preload;
- every cuBLAS product entry (cublas*gemm*, cublasLtMatmul) libtorch_cuda.so
  imports is hooked by libprofinject.so or listed, with the reason it need
  not be, in docs/blas-entry-points.md.

Run by ctest with the CUDA venv's interpreter (tools/setup --cuda) and the
build's paths in the environment.
"""
import atexit
import ctypes
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
SOURCE = os.environ["PI_SOURCE"]
SITE = sysconfig.get_paths()["purelib"]
CU13_LIB = os.path.join(SITE, "nvidia", "cu13", "lib")
TORCH_LIB = os.path.join(SITE, "torch", "lib")
if not os.path.isdir(CU13_LIB) or not os.path.isdir(TORCH_LIB):
    sys.exit("test_cuda_wheels: %s has no CUDA build of torch with its nvidia wheels "
             "(run tools/setup --cuda)" % sys.executable)

AVAILABLE = """
import torch
print(torch.__version__.split("+")[0], torch.version.cuda)
print(torch.cuda.is_available())
print(torch.cuda.device_count())
"""

TRAIN = """
import torch
torch.manual_seed(0)
model = torch.nn.Linear(16, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 16), torch.randn(64, 1)
for step in range(5):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(step, "%.6f" % loss.item())
print(torch.cuda.is_available())
"""

NCCL = """
import ctypes, sys
nccl = ctypes.CDLL(sys.argv[1])
version = ctypes.c_int(0)
result = nccl.ncclGetVersion(ctypes.byref(version))
nccl.ncclGetErrorString.restype = ctypes.c_char_p
print(result, version.value, nccl.ncclGetErrorString(result).decode())
"""


def driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def run(code, *args, preload):
    """(result, trace directory) of `python -c code` with or without the preload"""
    traces = tempfile.mkdtemp(prefix="pi-wheels-")
    atexit.register(shutil.rmtree, traces, True)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env.update(LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
    result = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                            text=True, timeout=300)
    return result, traces


def analyze(*args):
    return subprocess.run([ANALYZE, *args], check=True, capture_output=True, text=True).stdout


def dump(traces):
    return "".join(analyze("dump", os.path.join(traces, name))
                   for name in sorted(os.listdir(traces)))


class SameProgram(unittest.TestCase):
    """The program's output and exit status are its own under the preload."""

    def same(self, code, *args):
        plain, _ = run(code, *args, preload=False)
        traced, traces = run(code, *args, preload=True)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual(traced.returncode, 0, traced.stderr)
        self.assertEqual(traced.stdout, plain.stdout)
        self.assertNotIn("profinject:", traced.stderr)
        self.assertTrue(glob.glob(os.path.join(traces, "*.pitrace.zst")), "the preload recorded")
        return traced, traces

    def test_cuda_unavailable_as_without_the_preload(self):
        traced, _ = self.same(AVAILABLE)
        if not driver_present():
            self.assertEqual(traced.stdout.split()[2:], ["False", "0"], traced.stdout)

    def test_cpu_training_loop_gives_the_same_losses(self):
        traced, _ = self.same(TRAIN)
        self.assertEqual(len(traced.stdout.splitlines()), 6, traced.stdout)

    def test_real_nccl_loads_and_answers_the_same(self):
        library = os.path.join(SITE, "nvidia", "nccl", "lib", "libnccl.so.2")
        traced, _ = self.same(NCCL, library)
        result, version, text = traced.stdout.split(None, 2)
        self.assertEqual(result, "0", traced.stdout)
        self.assertGreaterEqual(int(version), 22000, "NCCL 2.x: major*10000 + minor*100 + patch")


class RuntimeWithoutDevice(unittest.TestCase):
    """The hooks bind to the wheel's real libcudart and libcupti; the trace says so."""

    @classmethod
    def setUpClass(cls):
        if driver_present():
            raise unittest.SkipTest("this machine has a CUDA driver: the path without one "
                                    "is not taken here")
        cls.result, cls.traces = run(AVAILABLE, preload=True)
        assert cls.result.returncode == 0, cls.result.stderr
        cls.dump = dump(cls.traces)

    def choices(self):
        return re.findall(r'gpu_timing source=(\d+) code=(-?\d+) reason="([^"]*)"', self.dump)

    def test_no_device_said_once_with_the_reason(self):
        [(source, code, reason)] = self.choices()
        self.assertEqual(source, "0", "GPU time absent")
        self.assertEqual(code, "35", "cudaErrorInsufficientDriver: no driver on this machine")
        self.assertIn("no usable CUDA device or driver", reason)
        self.assertIn("cudaGetDeviceCount: cudaErrorInsufficientDriver", reason)
        self.assertIn("CUPTI not started", reason)

    def test_runtime_and_cupti_are_the_wheels(self):
        [(_, _, reason)] = self.choices()
        match = re.search(r"; runtime (\S+); CUPTI (\S+) \((loaded|beside the runtime)", reason)
        self.assertIsNotNone(match, reason)
        runtime, cupti, how = match.groups()
        self.assertEqual(os.path.realpath(runtime), os.path.realpath(
            os.path.join(CU13_LIB, "libcudart.so.13")))
        self.assertEqual(os.path.realpath(cupti), os.path.realpath(
            os.path.join(CU13_LIB, "libcupti.so.13")))
        self.assertEqual(how, "loaded", "torch loads CUPTI itself (libtorch_cpu needs it)")

    def test_report_gives_the_reason_whole(self):
        out = os.path.join(self.traces, "report.json")
        analyze(self.traces, "--quiet", "--json", out)
        with open(out) as f:
            gpu = json.load(f)["gpu"]
        self.assertIn("libcupti.so.13 (loaded)", gpu["timing_reason"])


# ---- the import surface ----

# What an entry does, by its name. A name matching none does no device work
# (queries, contexts, modules, streams, attributes, error strings).
WORK = [
    ("graphs", r"Graph(?!ics)|Capture"),
    ("maps", r"^cuMem(Map|Unmap|AddressReserve|AddressFree|SetAccess|ExportToShareableHandle"
             r"|ImportFromShareableHandle|RetainAllocationHandle)|^cuMulticast"),
    ("allocates", r"Malloc|MemAlloc|HostAlloc|HostRegister|MemCreate|OpenMemHandle"),
    ("frees", r"Free|HostUnregister|MemRelease|CloseMemHandle|MemPoolTrimTo"),
    ("launches", r"Launch|StreamAddCallback"),
    ("copies", r"Memcpy|MemPrefetch|^cuFile(Read|Write)"),
    ("sets memory", r"Memset|StreamWriteValue|StreamBatchMemOp"),
    ("synchronises", r"Synchronize|StreamWaitValue"),
    ("events", r"EventRecord|StreamWaitEvent"),
]


def classify(name):
    base = re.sub(r"(_v\d+)?(_ptsz|_ptds)?$", "", name)
    for what, pattern in WORK:
        if re.search(pattern, base):
            return what
    return None


def is_cuda_name(name):
    return re.match(r"(__)?cuda[A-Z]|cu[A-Z]", name) is not None


def imported(library):
    out = subprocess.run(["nm", "-D", "--undefined-only", library], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def driver_api_names():
    """every driver entry cuda.h declares (the wheel's own header), by base and versioned name"""
    path = os.path.join(SITE, "nvidia", "cu13", "include", "cuda.h")
    with open(path) as f:
        header = f.read()
    names = set(re.findall(r"\bCUresult\s+CUDAAPI\s+(cu[A-Z]\w*)\s*\(", header))
    for base, versioned in re.findall(r"#define\s+(cu[A-Z]\w*)\s+(cu[A-Z]\w*)\b", header):
        names.update((base, versioned))
    return names


def looked_up(library, api):
    """driver entries named in @library's strings: what it resolves through
    cudaGetDriverEntryPoint, cuGetProcAddress or dlsym"""
    out = subprocess.run(["strings", "-n", "6", library], capture_output=True, text=True,
                         check=True).stdout
    tokens = set(re.findall(r"(?<![A-Za-z0-9_])cu[A-Z][A-Za-z0-9_]*", out))
    return {t for t in tokens if t in api}


def driver_table():
    """base name -> (legacy symbol, per-thread symbol) of preload/cuda/driver_entries.h"""
    with open(os.path.join(SOURCE, "preload", "cuda", "driver_entries.h")) as f:
        text = f.read()
    rows = re.findall(r'X\((cu\w+),\s*"(\w+)",\s*(?:"(\w+)"|NULL),[\s\\]*\d+\)', text)
    return {name: (legacy, per_thread or None) for name, legacy, per_thread in rows}


def documented(page="cuda-entry-points.md"):
    """entry -> reason, from the table under "## Not hooked" in docs/@page"""
    with open(os.path.join(SOURCE, "docs", page)) as f:
        text = f.read()
    section = text.split("\n## Not hooked\n", 1)[-1].split("\n## ", 1)[0]
    rows = re.findall(r"^\|\s*`([^`]+)`\s*\|([^|]*)\|([^|]*)\|", section, re.M)
    return {name: why.strip() for name, _, why in rows}


def wheel_libraries():
    found = sorted(glob.glob(os.path.join(TORCH_LIB, "*.so*")))
    for folder in sorted(glob.glob(os.path.join(SITE, "nvidia", "*", "lib"))):
        found += sorted(glob.glob(os.path.join(folder, "*.so*")))
    return [path for path in found if os.path.isfile(path)]


class ImportSurface(unittest.TestCase):
    """Each entry the wheels call that does device work is hooked or documented."""

    @classmethod
    def setUpClass(cls):
        cls.exports = exported(PRELOAD)
        cls.table = driver_table()
        cls.docs = documented()
        api = driver_api_names()
        cls.surface = {}  # entry -> libraries that use it
        for library in wheel_libraries():
            names = {n for n in imported(library) if is_cuda_name(n)}
            if os.path.dirname(library) == TORCH_LIB:
                names |= looked_up(library, api)
            for name in names:
                cls.surface.setdefault(name, []).append(os.path.basename(library))

    def hooked(self, name):
        if name.startswith(("cuda", "__cuda")):
            return name in self.exports
        base = re.sub(r"(_v\d+)?(_ptsz|_ptds)?$", "", name)
        symbols = self.table.get(base) or self.table.get(name)
        return symbols is not None and all(s in self.exports for s in symbols if s)

    def test_the_rule_knows_what_entries_do(self):
        self.assertEqual(classify("cuMemcpy3DPeerAsync_v2"), "copies")
        self.assertEqual(classify("cudaMallocFromPoolAsync_ptsz"), "allocates")
        self.assertEqual(classify("cuLaunchHostFunc"), "launches")
        self.assertEqual(classify("cuGraphInstantiateWithParams"), "graphs")
        self.assertEqual(classify("cuMemsetD2D32Async"), "sets memory")
        self.assertEqual(classify("cuEventRecordWithFlags_ptsz"), "events")
        self.assertIsNone(classify("cudaGetDeviceProperties"))

    def test_the_surface_is_the_wheels(self):
        for name in ("cudaMalloc", "__cudaLaunchKernel", "cudaLaunchKernelExC", "cuMemCreate",
                     "cudaGetDriverEntryPointByVersion", "cuLaunchKernel"):
            self.assertIn(name, self.surface, "torch %s: the import surface lost %s" %
                          (TORCH_LIB, name))

    def test_every_entry_doing_work_is_hooked_or_documented(self):
        missing = []
        for name in sorted(self.surface):
            what = classify(name)
            if what and not self.hooked(name) and name not in self.docs:
                missing.append("%s (%s; used by %s)" % (name, what, ", ".join(self.surface[name])))
        self.assertEqual(missing, [], "neither hooked by libprofinject.so nor listed in "
                         "docs/cuda-entry-points.md:\n  " + "\n  ".join(missing))

    def test_documented_entries_are_not_hooked_and_say_why(self):
        for name, why in self.docs.items():
            self.assertFalse(self.hooked(name), "%s is hooked: take it out of the docs" % name)
            self.assertTrue(why, "%s: say why it need not be hooked" % name)

    def test_counts_per_library(self):
        counts = {}
        for name, libraries in self.surface.items():
            for library in libraries:
                count = counts.setdefault(library, [0, 0, 0, 0])
                count[0] += 1
                if classify(name):
                    count[1] += 1
                    count[2] += self.hooked(name)
                    count[3] += name in self.docs
        for library, (total, work, hooked, listed) in sorted(counts.items()):
            print("  %-26s %3d CUDA entries, %2d doing work: %2d hooked, %2d documented" %
                  (library, total, work, hooked, listed), file=sys.stderr)
        for name in ("libtorch_cuda.so", "libc10_cuda.so"):
            self.assertGreater(counts.get(name, [0])[0], 0, name)


class NcclImportSurface(unittest.TestCase):
    """Each nccl* entry libtorch_cuda.so imports is hooked or documented."""

    @classmethod
    def setUpClass(cls):
        cls.exports = exported(PRELOAD)
        cls.docs = documented("nccl-entry-points.md")
        cls.surface = {n for n in imported(os.path.join(TORCH_LIB, "libtorch_cuda.so"))
                       if re.match(r"p?nccl[A-Z]", n)}

    def test_the_surface_is_the_wheels(self):
        for name in ("ncclAllReduce", "ncclCommInitRankConfig", "ncclGroupEnd", "ncclCommSplit"):
            self.assertIn(name, self.surface, "libtorch_cuda.so no longer imports %s" % name)

    def test_every_entry_is_hooked_or_documented(self):
        missing = sorted(n for n in self.surface if n not in self.exports and n not in self.docs)
        self.assertEqual(missing, [], "neither hooked by libprofinject.so nor listed in "
                         "docs/nccl-entry-points.md:\n  " + "\n  ".join(missing))

    def test_documented_entries_are_not_hooked_and_say_why(self):
        for name, why in self.docs.items():
            self.assertNotIn(name, self.exports, "%s is hooked: take it out of the docs" % name)
            self.assertTrue(why, "%s: say why it need not be hooked" % name)
        hooked = sorted(n for n in self.surface if n in self.exports)
        print("  libtorch_cuda.so: %d nccl entries, %d hooked, %d documented" %
              (len(self.surface), len(hooked), len(self.surface) - len(hooked)), file=sys.stderr)


class BlasImportSurface(unittest.TestCase):
    """Each cuBLAS product entry libtorch_cuda.so imports is hooked or documented."""

    @classmethod
    def setUpClass(cls):
        cls.exports = exported(PRELOAD)
        cls.docs = documented("blas-entry-points.md")
        cls.surface = {n for n in imported(os.path.join(TORCH_LIB, "libtorch_cuda.so"))
                       if re.match(r"cublas\w*gemm", n, re.I) or n == "cublasLtMatmul"}

    def test_the_surface_is_the_wheels(self):
        for name in ("cublasGemmEx", "cublasGemmStridedBatchedEx", "cublasLtMatmul",
                     "cublasSgemm_v2"):
            self.assertIn(name, self.surface, "libtorch_cuda.so no longer imports %s" % name)

    def test_every_entry_is_hooked_or_documented(self):
        missing = sorted(n for n in self.surface if n not in self.exports and n not in self.docs)
        self.assertEqual(missing, [], "neither hooked by libprofinject.so nor listed in "
                         "docs/blas-entry-points.md:\n  " + "\n  ".join(missing))

    def test_documented_entries_are_not_hooked_and_say_why(self):
        for name, why in self.docs.items():
            self.assertNotIn(name, self.exports, "%s is hooked: take it out of the docs" % name)
            self.assertTrue(why, "%s: say why it need not be hooked" % name)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
