"""Drives the real libnccl.so.2 of the nvidia-nccl-cu13 wheel (argv[1]) with
ctypes, as code that dlsyms NCCL does, on a machine without a GPU: the
version, a unique id, and ncclCommInitRank of one rank, which fails there.
Prints each result; tests/nccl/test_nccl.py runs it with and without the
preload."""
import ctypes
import sys


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]  # ncclUniqueId, passed by value


nccl = ctypes.CDLL(sys.argv[1])
nccl.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, UniqueId,
                                  ctypes.c_int]
version = ctypes.c_int(0)
print("version", nccl.ncclGetVersion(ctypes.byref(version)), version.value)
uid = UniqueId()
result = nccl.ncclGetUniqueId(ctypes.byref(uid))
print("unique_id", result)
print("id", bytes(bytearray(uid)).hex(), file=sys.stderr)  # all 128 bytes, for the hash
comm = ctypes.c_void_p(0)
print("init_rank", nccl.ncclCommInitRank(ctypes.byref(comm), 1, uid, 0), comm.value)
