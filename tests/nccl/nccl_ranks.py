"""One rank of a job on the fake libnccl.so.2 (tests/fake_nccl), driven with ctypes as
code that dlopens CUDA and NCCL does: RANK and WORLD_SIZE say which, and every rank
all-reduces once a step and waits for it (cudaStreamSynchronize, as a loss.item() after
an all-reduce does). The fake NCCL's kernels wait on the device for every rank's call
(FAKE_NCCL_RENDEZVOUS), as NCCL's do.

At --hang-step the rank --skip-rank skips the all-reduce and goes into stuck() (its own
code, sleeping in a loop) for ever: the others' kernels wait for it, and they stay
blocked in cudaStreamSynchronize.

  python nccl_ranks.py LIBCUDART LIBNCCL --truth DIR [--skip-rank 2] [--hang-step 10]

Rank 0 makes the unique id and hands it over in DIR/unique_id. Each rank writes its own
account to DIR: rank<N>.pid once it has started, rank<N>.where when it reaches its last
place (the step, and "stuck" or "all_reduce"), for a test to stop the job knowing where
every rank is.
"""
import argparse
import ctypes
import os
import time


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]  # ncclUniqueId, passed by value


NCCL_FLOAT32, NCCL_SUM = 7, 0


def say(truth, name, text):
    path = os.path.join(truth, name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)  # whole, never half-written


def unique_id(nccl, truth, rank):
    """rank 0's unique id, as every rank of the communicator must have it"""
    uid = UniqueId()
    path = os.path.join(truth, "unique_id")
    if rank == 0:
        assert nccl.ncclGetUniqueId(ctypes.byref(uid)) == 0
        with open(path + ".tmp", "wb") as f:
            f.write(bytes(bytearray(uid)))
        os.rename(path + ".tmp", path)
        return uid
    while not os.path.exists(path):
        time.sleep(0.01)
    with open(path, "rb") as f:
        ctypes.memmove(ctypes.byref(uid), f.read(), ctypes.sizeof(uid))
    return uid


def stuck():
    while True:
        time.sleep(0.05)  # stuck here


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cudart")
    parser.add_argument("nccl")
    parser.add_argument("--truth", required=True)
    parser.add_argument("--skip-rank", type=int, default=2)
    parser.add_argument("--hang-step", type=int, default=10)
    args = parser.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])

    cudart = ctypes.CDLL(args.cudart)
    nccl = ctypes.CDLL(args.nccl)
    nccl.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, UniqueId,
                                      ctypes.c_int]
    nccl.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    cudart.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]

    say(args.truth, f"rank{rank}.pid", str(os.getpid()))
    comm = ctypes.c_void_p(0)
    assert nccl.ncclCommInitRank(ctypes.byref(comm), world, unique_id(nccl, args.truth, rank),
                                 rank) == 0
    buffer = ctypes.c_void_p(0)
    assert cudart.cudaMalloc(ctypes.byref(buffer), 4096 * 4) == 0
    for step in range(1, 1_000_000):
        if rank == args.skip_rank and step == args.hang_step:
            say(args.truth, f"rank{rank}.where", f"{step} stuck")
            stuck()
        assert nccl.ncclAllReduce(buffer, buffer, 4096, NCCL_FLOAT32, NCCL_SUM, comm, None) == 0
        if step == args.hang_step:
            say(args.truth, f"rank{rank}.where", f"{step} all_reduce")
        cudart.cudaStreamSynchronize(None)  # the others wait here
        time.sleep(0.01)


if __name__ == "__main__":
    main()
