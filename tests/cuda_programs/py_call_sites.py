"""Python frames on CUDA calls, against the test double (tests/fake_cuda).

    python py_call_sites.py LIBCUDART NATIVE_THREAD_LIB MODE

Each call sits on a line marked with a comment naming it ("# site: NAME");
tests/cuda/test_python_frames.py finds those lines in this file and checks
that the report puts each call there, in the function around it.

Modes:
  alloc     the main thread allocates through ctypes.CDLL (which releases
            the GIL around the call) and ctypes.PyDLL (which keeps it);
            both blocks are never freed
  threads   a Python worker thread allocates with the GIL (PyDLL) and
            without it (CDLL); a native thread with no Python thread state
            allocates too
  launch    the main thread launches a kernel 40 times without the GIL and
            25 times with it (PROFINJECT_PY_SAMPLE=1 samples them all)
  modules   a model of nested classes whose forward methods launch
            kernels of known durations (Model > Embedding, 2 x Block >
            Attention, MLP > Linear; a head Linear), 40 steps, each with an
            SGD step (an optimizer: its file is under torch/optim/) and a
            "loss" kernel outside any forward, and as many gemm kernels
            as the forward's and 2 gelu from a thread Python never saw (as
            autograd's launch the backward pass); then, from one such thread,
            40 backward passes whose kernels are launched by functions named
            as autograd nodes (MmBackward0, AddmmBackward0,
            NativeLayerNormBackward0, PyNode); prints as JSON the GPU time
            each module path launched under, from the model's own count,
            under "(backward)" each node's, and under "(by kernel)" each
            path's and node's ("backward/MmBackward0") by kernel
  wait      the main thread of a process with a child reads a pipe the
            child writes to after a pause (three batches, each acknowledged
            before the next is sent), and waits on a queue a thread fills
            after a pause
"""
import ctypes
import json
import os
import queue
import sys
import threading
import time

MiB = 1 << 20


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def load(path):
    # RTLD_GLOBAL: the profiler's cudaMalloc (first in the global scope) finds the real one
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    # through the global scope, as PyTorch's own calls resolve: the profiler's hooks
    return ctypes.CDLL(None), ctypes.PyDLL(None)


def allocate_released(cuda, size):
    pointer = ctypes.c_void_p()
    cuda.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(size))  # site: released
    return pointer


def allocate_held(cuda_with_gil, size):
    pointer = ctypes.c_void_p()
    cuda_with_gil.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(size))  # site: held
    return pointer


def alloc_mode(cuda, cuda_with_gil):
    kept = [allocate_released(cuda, 1 * MiB)]  # site: released caller
    kept.append(allocate_held(cuda_with_gil, 2 * MiB))  # site: held caller
    return kept


def worker(cuda, cuda_with_gil, kept):
    pointer = ctypes.c_void_p()
    cuda_with_gil.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(3 * MiB))  # site: worker held
    kept.append(pointer)
    pointer = ctypes.c_void_p()
    cuda.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(4 * MiB))  # site: worker released
    kept.append(pointer)


def threads_mode(cuda, cuda_with_gil, native_library):
    kept = []
    thread = threading.Thread(target=worker, args=(cuda, cuda_with_gil, kept), name="worker")
    thread.start()
    thread.join()
    native = ctypes.CDLL(native_library)
    if native.allocate_in_native_thread(ctypes.c_size_t(5 * MiB)) != 0:
        raise SystemExit("the native thread's allocation failed")
    return kept


def register_kernel(cuda, function="step"):
    stub = ctypes.create_string_buffer(16)  # the "host stub": any address the runtime knows
    cuda.__cudaRegisterFatBinary.restype = ctypes.c_void_p
    module = cuda.__cudaRegisterFatBinary(None)
    name = f"_Z{len(function)}{function}Pf".encode()
    cuda.__cudaRegisterFunction(ctypes.c_void_p(module), stub, name, name, -1, None, None, None,
                                None, None)
    return stub


def launch_released(cuda, stub, args):
    one = Dim3(1, 1, 1)
    return cuda.cudaLaunchKernel(stub, one, one, args, ctypes.c_size_t(0), None)  # site: launch released


def launch_held(cuda_with_gil, stub, args):
    one = Dim3(1, 1, 1)
    return cuda_with_gil.cudaLaunchKernel(stub, one, one, args, ctypes.c_size_t(0), None)  # site: launch held


def launch_mode(cuda, cuda_with_gil):
    stub = register_kernel(cuda)
    duration = ctypes.c_uint64(0)
    args = (ctypes.c_void_p * 1)(ctypes.addressof(duration))
    failures = 0
    for _ in range(40):
        failures += launch_released(cuda, stub, args) != 0
    for _ in range(25):
        failures += launch_held(cuda_with_gil, stub, args) != 0
    if failures:
        raise SystemExit(f"{failures} launches failed")


class Kernels:
    """Kernels by name, each launched with its duration (the fake GPU runs it that long), and
    the model's own count of the GPU time launched under each module path."""

    def __init__(self, cuda):
        self.cuda, self.stubs, self.path, self.truth = cuda, {}, [], {}
        self.by_kernel = {}  # path -> kernel -> GPU time launched under it

    def launch(self, name, duration_ns):
        if name not in self.stubs:
            self.stubs[name] = register_kernel(self.cuda, name)
        duration = ctypes.c_uint64(duration_ns)
        args = (ctypes.c_void_p * 1)(ctypes.addressof(duration))
        one = Dim3(1, 1, 1)
        if self.cuda.cudaLaunchKernel(self.stubs[name], one, one, args, ctypes.c_size_t(0), None):
            raise SystemExit(f"launching {name} failed")
        for depth in range(len(self.path)):
            key = "/".join(self.path[:depth + 1])
            self.truth[key] = self.truth.get(key, 0) + duration_ns
            kernels = self.by_kernel.setdefault(key, {})
            kernels[name] = kernels.get(name, 0) + duration_ns
        if not self.path:
            self.truth[""] = self.truth.get("", 0) + duration_ns

    def scope(self, name):
        kernels = self

        class Scope:
            def __enter__(self):
                kernels.path.append(name)

            def __exit__(self, *exc):
                kernels.path.pop()
        return Scope()


class Linear:
    def __init__(self, k):
        self.k = k

    def forward(self):
        with self.k.scope("Linear"):
            self.k.launch("gemm", 300_000)


class Embedding:
    def __init__(self, k):
        self.k = k

    def forward(self):
        with self.k.scope("Embedding"):
            self.k.launch("embed", 200_000)


class Attention:
    def __init__(self, k):
        self.k, self.qkv, self.out = k, Linear(k), Linear(k)

    def forward(self):
        with self.k.scope("Attention"):
            self.qkv.forward()
            self.k.launch("softmax", 100_000)
            self.out.forward()


class MLP:
    def __init__(self, k):
        self.k, self.fc1, self.fc2 = k, Linear(k), Linear(k)

    def forward(self):
        with self.k.scope("MLP"):
            self.fc1.forward()
            self.k.launch("gelu", 50_000)
            self.fc2.forward()


class Block:
    def __init__(self, k):
        self.k, self.attention, self.mlp = k, Attention(k), MLP(k)

    def forward(self):
        with self.k.scope("Block"):
            self.attention.forward()
            self.mlp.forward()


class Model:
    def __init__(self, k):
        self.k, self.embedding, self.head = k, Embedding(k), Linear(k)
        self.blocks = [Block(k), Block(k)]

    def forward(self):
        with self.k.scope("Model"):
            self.embedding.forward()
            for block in self.blocks:
                block.forward()
            self.head.forward()


def load_optimizer():
    """optimizer_files/torch/optim/sgd.py, from its path: a file under torch/optim/ is an
    optimizer's to the report, and no import of torch may find this one."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizer_files", "torch",
                        "optim", "sgd.py")
    spec = importlib.util.spec_from_file_location("sgd_for_the_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Launches(ctypes.Structure):
    _fields_ = [("stub", ctypes.c_void_p), ("duration_ns", ctypes.c_uint64), ("count", ctypes.c_int)]


class BackwardPass(ctypes.Structure):
    _fields_ = [("mm", Launches), ("addmm", Launches), ("layer_norm", Launches),
                ("py_node", Launches), ("unnamed", Launches * 2), ("steps", ctypes.c_int)]


def backward_passes(kernels, native, steps):
    """@steps backward passes from one thread Python never saw, each node's kernels launched by
    a function whose symbol is the node's apply (lib_native_thread.c), then the forward's gemm
    as often again and 2 gelu under no node: the GPU time of each node, and of those"""
    plan = {"mm": ("MmBackward0", "gemm", 300_000, 6), "addmm": ("AddmmBackward0", "gemm", 300_000, 3),
            "layer_norm": ("NativeLayerNormBackward0", "layer_norm_backward", 80_000, 2),
            "py_node": ("PyNode", "gelu", 50_000, 2)}
    unnamed = [("gemm", 300_000, 9), ("gelu", 50_000, 2)]
    for kernel in {k for _, k, _, _ in plan.values()}:
        if kernel not in kernels.stubs:
            kernels.stubs[kernel] = register_kernel(kernels.cuda, kernel)

    def launches(kernel, ns, count):
        return Launches(ctypes.cast(kernels.stubs[kernel], ctypes.c_void_p), ns, count)
    passes = BackwardPass(steps=steps, unnamed=(Launches * 2)(*(launches(*u) for u in unnamed)),
                          **{field: launches(*p[1:]) for field, p in plan.items()})
    native.backward_in_native_thread.argtypes = [ctypes.POINTER(BackwardPass)]
    if native.backward_in_native_thread(ctypes.byref(passes)):
        raise SystemExit("the backward passes' launches failed")
    by_kernel = {}
    for node, kernel, ns, count in plan.values():
        by_kernel.setdefault("backward", {}).setdefault(kernel, 0)
        by_kernel["backward"][kernel] += steps * ns * count
        by_kernel[f"backward/{node}"] = {kernel: steps * ns * count}
    return ({node: steps * ns * count for node, _, ns, count in plan.values()},
            sum(steps * ns * count for _, ns, count in unnamed), by_kernel)


def modules_mode(cuda, native_library):
    kernels = Kernels(cuda)
    model = Model(kernels)
    # the first launch decides how GPU time is taken and may go untimed: 1 us, not counted
    kernels.launch("warm_up", 1000)
    kernels.truth.clear()
    kernels.by_kernel.clear()
    optimizer = load_optimizer().SGD(kernels)
    for _ in range(40):
        model.forward()
        optimizer.step()  # outside any forward, an optimizer's step
        kernels.launch("loss", 150_000)  # outside both
    # the backward passes' kernels, from a thread without Python frames (autograd's)
    kernels.truth["(backward)"], kernels.truth["(native thread)"], backward_kernels = \
        backward_passes(kernels, ctypes.CDLL(native_library), 40)
    kernels.truth["(by kernel)"] = dict(kernels.by_kernel, **backward_kernels)
    if cuda.cudaDeviceSynchronize():  # every kernel ran: its GPU time is known
        raise SystemExit("cudaDeviceSynchronize failed")
    print(json.dumps(kernels.truth))


def read_batch(fd):
    return os.read(fd, 64)  # site: pipe read


def receive(batches, acknowledgements):
    batch = read_batch(batches)
    os.write(acknowledgements, b"!")
    return batch


def wait_mode():
    batches, batch_sent = os.pipe()
    acknowledged, acknowledgements = os.pipe()
    child = os.fork()
    if child == 0:
        for _ in range(3):
            time.sleep(0.05)
            os.write(batch_sent, b"batch")
            os.read(acknowledged, 1)
        os._exit(0)
    received = [receive(batches, acknowledgements) for _ in range(3)]
    os.waitpid(child, 0)
    handoff = queue.Queue()
    threading.Timer(0.05, handoff.put, args=("batch",)).start()
    received.append(handoff.get())  # site: queue get
    if received != [b"batch"] * 3 + ["batch"]:
        raise SystemExit(f"received {received}")


def main():
    cuda_path, native_library, mode = sys.argv[1:4]
    if mode == "wait":
        wait_mode()
    else:
        cuda, cuda_with_gil = load(cuda_path)
        if mode == "alloc":
            kept = alloc_mode(cuda, cuda_with_gil)
        elif mode == "threads":
            kept = threads_mode(cuda, cuda_with_gil, native_library)
        elif mode == "modules":
            modules_mode(cuda, native_library)
            return
        else:
            kept = launch_mode(cuda, cuda_with_gil)
        del kept
    print("ok")


if __name__ == "__main__":
    main()
