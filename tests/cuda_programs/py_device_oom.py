"""A training-like loop that keeps 64 MiB of device memory a step until the
device is full, against the test double (tests/fake_cuda, run with
FAKE_CUDA_DEVICE_MB set).

    python py_device_oom.py LIBCUDART MODE

Prints its own account: "kept N" (allocations held when the request
failed), "request BYTES", "device FREE TOTAL" (the driver's cuMemGetInfo
right after the failure), then by MODE:
  die     raises MemoryError, as PyTorch raises OutOfMemoryError
  retry   frees half of what it kept, asks again ("retry ok"), ends well
"""
import ctypes
import sys

MiB = 1 << 20
STEP = 64 * MiB


def allocate(cuda, size):
    pointer = ctypes.c_void_p()
    status = cuda.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(size))  # site: request
    return status, pointer


def main(cudart, mode):
    ctypes.CDLL(cudart, mode=ctypes.RTLD_GLOBAL)
    cuda = ctypes.PyDLL(None)  # the profiler's hooks first, as PyTorch's calls resolve
    kept = []
    while True:
        status, pointer = allocate(cuda, STEP)
        if status != 0:
            break
        kept.append(pointer)
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    ctypes.CDLL("libcuda.so.1").cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
    print("kept", len(kept))
    print("request", STEP)
    print("device", free.value, total.value, flush=True)
    if mode == "die":
        raise MemoryError(f"out of device memory: tried to allocate {STEP >> 20} MiB")
    for pointer in kept[: len(kept) // 2]:
        cuda.cudaFree(pointer)
    status, _ = allocate(cuda, STEP)
    print("retry", "ok" if status == 0 else "failed")


main(sys.argv[1], sys.argv[2])
