#!/usr/bin/env python3
"""py_gemm_modules.py CUDART CUBLAS: a model of nested classes whose forward
methods call cuBLAS (the fake libcublas.so.13 on the fake libcudart.so.13,
through ctypes as PyTorch's calls go, by the global scope: the profiler's
hooks). Model > 2 x Block > Attention (two fp32 Linear products, through
cublasSgemm_v2) and MLP (two bf16 ones, through cublasGemmEx), 20 steps.
Prints as JSON, by module path, the FLOPs (2·m·n·k) of the products made
under it and the GPU time the fake device's rule gives their kernels
(tests/fake_cublas/fake_cublas.h), from the model's own count."""
import ctypes
import json
import sys

CUDA_R_32F, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUBLAS_OP_N = 0, 14, 68, 0


def kernel_ns(flops):
    return 200_000 + flops // 100  # FAKE_GEMM_KERNEL_NS


class Blas:
    def __init__(self, cudart, cublas):
        for path in (cudart, cublas):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        self.lib = ctypes.CDLL(None)
        self.handle = ctypes.c_void_p()
        self.memory = ctypes.c_void_p()
        if self.lib.cublasCreate_v2(ctypes.byref(self.handle)) or \
                self.lib.cudaMalloc(ctypes.byref(self.memory), ctypes.c_size_t(1 << 20)):
            raise SystemExit("set-up failed")
        self.one, self.zero = ctypes.c_float(1), ctypes.c_float(0)
        self.path, self.truth = [], {}

    def product(self, m, n, k, bf16):
        a, one, zero = self.memory, ctypes.byref(self.one), ctypes.byref(self.zero)
        if bf16:
            r = self.lib.cublasGemmEx(self.handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, one, a,
                                      CUDA_R_16BF, m, a, CUDA_R_16BF, k, zero, a, CUDA_R_16BF, m,
                                      CUBLAS_COMPUTE_32F, -1)
        else:
            r = self.lib.cublasSgemm_v2(self.handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, one, a, m,
                                        a, k, zero, a, m)
        if r:
            raise SystemExit(f"product failed: {r}")
        flops = 2 * m * n * k
        for depth in range(1, len(self.path) + 1):
            row = self.truth.setdefault("/".join(self.path[:depth]), [0, 0])
            row[0] += flops
            row[1] += kernel_ns(flops)


class Module:
    def __init__(self, blas):
        self.blas = blas

    def __call__(self):
        self.blas.path.append(type(self).__name__)
        try:
            self.forward()
        finally:
            self.blas.path.pop()


class Linear(Module):
    def __init__(self, blas, m, n, k, bf16):
        super().__init__(blas)
        self.shape = (m, n, k, bf16)

    def forward(self):
        self.blas.product(*self.shape)


class Attention(Module):
    def __init__(self, blas):
        super().__init__(blas)
        self.query, self.out = Linear(blas, 256, 128, 64, False), Linear(blas, 128, 128, 64, False)

    def forward(self):
        self.query()
        self.out()


class MLP(Module):
    def __init__(self, blas):
        super().__init__(blas)
        self.up, self.down = Linear(blas, 512, 128, 128, True), Linear(blas, 128, 128, 512, True)

    def forward(self):
        self.up()
        self.down()


class Block(Module):
    def __init__(self, blas):
        super().__init__(blas)
        self.attention, self.mlp = Attention(blas), MLP(blas)

    def forward(self):
        self.attention()
        self.mlp()


class Model(Module):
    def __init__(self, blas):
        super().__init__(blas)
        self.blocks = [Block(blas), Block(blas)]

    def forward(self):
        for block in self.blocks:
            block()


def main():
    blas = Blas(*sys.argv[1:3])
    model = Model(blas)
    for _ in range(20):
        model()
    if blas.lib.cudaDeviceSynchronize():
        raise SystemExit("synchronise failed")
    print(json.dumps({path: {"flops": f, "kernel_ns": ns} for path, (f, ns) in blas.truth.items()}))


if __name__ == "__main__":
    main()
