/*
 * fake_cublas.h - the rule of the fake libcublas.so.13 and libcublasLt.so.13
 * device work, which the tests compute their expected GPU times from.
 *
 * A product of m, n, k and batch does FAKE_GEMM_FLOPS of work and launches
 * its kernels through the fake libcudart (cudaLaunchKernel on the stream the
 * handle or the call names), together running FAKE_GEMM_KERNEL_NS(flops) on
 * the fake device: one kernel, or, for strided batched products, a main
 * kernel and a split-K reduction that run FAKE_GEMM_MAIN_NS and the rest.
 * The main kernel is named after A's type (fp32, bf16, else fp16), as
 * cuBLAS's kernels are.
 * An invalid shape (a negative size) launches nothing and fails.
 */
#ifndef FAKE_CUBLAS_H
#define FAKE_CUBLAS_H

#define FAKE_GEMM_FLOPS(m, n, k, batch)                                                           \
    (2ull * (unsigned long long)(m) * (unsigned long long)(n) * (unsigned long long)(k) *         \
     (unsigned long long)(batch))
#define FAKE_GEMM_KERNEL_NS(flops) (200000ull + (unsigned long long)(flops) / 100ull)
#define FAKE_GEMM_MAIN_NS(total_ns) ((total_ns) * 3ull / 4ull)

/* fake_gemm_launch - launch the kernels of a product of @flops on A's cudaDataType_t @type
 * on @stream: @split gives it a second, reduction kernel; 0 or -1 as cudaLaunchKernel
 * answered */
int fake_gemm_launch(unsigned long long flops, int type, int split, void *stream);

#endif
