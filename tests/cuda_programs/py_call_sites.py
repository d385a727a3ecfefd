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
  wait      the main thread of a process with a child reads a pipe the
            child writes to after a pause (three batches, each acknowledged
            before the next is sent), and waits on a queue a thread fills
            after a pause
"""
import ctypes
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


def register_kernel(cuda):
    stub = ctypes.create_string_buffer(16)  # the "host stub": any address the runtime knows
    cuda.__cudaRegisterFatBinary.restype = ctypes.c_void_p
    module = cuda.__cudaRegisterFatBinary(None)
    name = b"_Z4stepPf"
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
        else:
            kept = launch_mode(cuda, cuda_with_gil)
        del kept
    print("ok")


if __name__ == "__main__":
    main()
