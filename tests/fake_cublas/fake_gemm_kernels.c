/*
 * fake_gemm_kernels.c - the kernels of the fake cuBLAS libraries, launched
 * through the fake libcudart by the rule of fake_cublas.h. Compiled into
 * each library, which registers its own.
 */
#include <cuda_runtime_api.h>
#include <library_types.h>
#include <stdint.h>

#include "fake_cublas.h"

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);

/* named as cuBLAS's on sm_90 are named: one per matrix type, as cuBLAS's differ by type */
enum { K_GEMM_F32, K_GEMM_BF16, K_GEMM_F16, K_REDUCE, K_COUNT };
static const char *const kernel_names[K_COUNT] = {
    "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_f16f16_f16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "cublasLt::splitKreduce_kernel"};
static const char stubs[K_COUNT]; /* distinct addresses the fake runtime knows them by */

__attribute__((constructor)) static void register_kernels(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    for (int k = 0; k < K_COUNT; k++)
        __cudaRegisterFunction(module, &stubs[k], (char *)kernel_names[k], kernel_names[k], -1,
                               NULL, NULL, NULL, NULL, NULL);
}

static int launch(int kernel, unsigned long long ns, void *stream)
{
    void *args[] = {&ns};
    dim3 one = {1, 1, 1};
    return cudaLaunchKernel(&stubs[kernel], one, one, args, 0, (cudaStream_t)stream) == cudaSuccess
               ? 0
               : -1;
}

int fake_gemm_launch(unsigned long long flops, int type, int split, void *stream)
{
    int kernel = type == CUDA_R_32F ? K_GEMM_F32 : type == CUDA_R_16BF ? K_GEMM_BF16 : K_GEMM_F16;
    unsigned long long ns = FAKE_GEMM_KERNEL_NS(flops);
    if (!split)
        return launch(kernel, ns, stream);
    unsigned long long main_ns = FAKE_GEMM_MAIN_NS(ns);
    return launch(kernel, main_ns, stream) || launch(K_REDUCE, ns - main_ns, stream) ? -1 : 0;
}
