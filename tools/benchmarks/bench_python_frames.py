"""bench_python_frames.py LIBCUDART alloc|launch-released|launch-held N

Prints the ns per call of the fastest of 9 rounds of N calls through ctypes,
against the CUDA test double, made 20 Python frames deep (a training
step's stack is about that deep under PyTorch's modules):
  alloc             cudaMalloc + cudaFree through ctypes.CDLL (the GIL is
                    released around each call, as PyTorch's operators do)
  launch-released   a kernel launch through ctypes.CDLL
  launch-held       a kernel launch through ctypes.PyDLL (the GIL is held)
tools/bench runs it under the profiler with and without Python frames.
"""
import ctypes
import sys
import time

DEPTH = 20


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def rounds(call, n):
    times = []
    for _ in range(9):
        start = time.perf_counter_ns()
        for _ in range(n):
            call()
        times.append((time.perf_counter_ns() - start) / n)
    return sorted(times)[0]


def deep(depth, work, n):
    return deep(depth - 1, work, n) if depth else rounds(work, n)


def main():
    path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    cuda = ctypes.CDLL(None) if mode != "launch-held" else ctypes.PyDLL(None)
    if mode == "alloc":
        pointer = ctypes.c_void_p()
        size = ctypes.c_size_t(1 << 20)

        def work():
            cuda.cudaMalloc(ctypes.byref(pointer), size)
            cuda.cudaFree(pointer)
    else:
        stub = ctypes.create_string_buffer(16)
        cuda.__cudaRegisterFatBinary.restype = ctypes.c_void_p
        module = cuda.__cudaRegisterFatBinary(None)
        cuda.__cudaRegisterFunction(ctypes.c_void_p(module), stub, b"_Z4stepv", b"_Z4stepv", -1,
                                    None, None, None, None, None)
        zero = ctypes.c_uint64(0)
        args = (ctypes.c_void_p * 1)(ctypes.addressof(zero))
        one = Dim3(1, 1, 1)
        no_bytes = ctypes.c_size_t(0)

        def work():
            cuda.cudaLaunchKernel(stub, one, one, args, no_bytes, None)
    print(f"{deep(DEPTH, work, n):.1f}")


if __name__ == "__main__":
    main()
