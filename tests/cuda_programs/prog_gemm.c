/*
 * prog_gemm: matrix products as PyTorch makes them, against the fake
 * cuBLAS libraries (tests/fake_cublas): 6 training steps, each a top-level
 * NVTX range that calls cublasSgemm_v2, cublasGemmEx in bfloat16 with A
 * transposed, cublasGemmStridedBatchedEx in half with a batch of 8 (two
 * kernels), cublasSgemm_v2_64, and cublasLtMatmul twice: addmm with a bias
 * (epilogue BIAS, A transposed, column-major layouts) and a batched one
 * (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT 4). Then one product that fails (a
 * negative size). Prints, as JSON, every call with its shape, type and the
 * kernel time the fake device's rule gives it, and each step's length by
 * its own clock: the truth the tests hold the report to.
 */
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "../fake_cublas/fake_cublas.h"

#define STEPS 6

static int failures;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* One call said as JSON: @dtype as the report names the type class. */
static void said(const char *api, long m, long n, long k, long batch, const char *dtype,
                 int failed)
{
    static int first = 1;
    unsigned long long flops = failed ? 0 : FAKE_GEMM_FLOPS(m, n, k, batch);
    printf("%s{\"api\": \"%s\", \"m\": %ld, \"n\": %ld, \"k\": %ld, \"batch\": %ld, "
           "\"dtype\": \"%s\", \"failed\": %s, \"kernel_ns\": %llu}",
           first ? "" : ",\n  ", api, m, n, k, batch, dtype, failed ? "true" : "false",
           failed ? 0ull : FAKE_GEMM_KERNEL_NS(flops));
    first = 0;
}

static void check(cublasStatus_t r, const char *what)
{
    if (r != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "%s: status %d\n", what, (int)r);
        failures++;
    }
}

/* PyTorch's addmm through cuBLASLt: D (m×n) = A^T·B + bias, A stored k×m, column-major. */
static void lt_matmul(cublasLtHandle_t lt, int m, int n, int k, int batch, const void *bias,
                      void *memory)
{
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
    int32_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                         sizeof(trans_a)), "transa");
    check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                         sizeof(trans_b)), "transb");
    if (bias) {
        int32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
        check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                             sizeof(epilogue)), "epilogue");
        check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                             sizeof(bias)), "bias");
    }
    check(cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, (uint64_t)k, (uint64_t)m, k), "a");
    check(cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, (uint64_t)k, (uint64_t)n, k), "b");
    check(cublasLtMatrixLayoutCreate(&d, CUDA_R_16BF, (uint64_t)m, (uint64_t)n, m), "d");
    if (batch > 1) {
        int32_t count = batch;
        int64_t strides[3] = {(int64_t)k * m, (int64_t)k * n, (int64_t)m * n};
        cublasLtMatrixLayout_t layouts[3] = {a, b, d};
        for (int i = 0; i < 3; i++) {
            check(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                   &count, sizeof(count)), "batch");
            check(cublasLtMatrixLayoutSetAttribute(layouts[i],
                                                   CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                   &strides[i], sizeof(strides[i])), "stride");
        }
    }
    float one = 1, zero = 0;
    check(cublasLtMatmul(lt, desc, &one, memory, a, memory, b, &zero, memory, d, memory, d, NULL,
                         NULL, 0, 0), "cublasLtMatmul");
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(d);
    cublasLtMatmulDescDestroy(desc);
}

int main(void)
{
    void *memory = NULL;
    failures += cudaMalloc(&memory, 1 << 20) != cudaSuccess;
    cublasHandle_t handle;
    cublasLtHandle_t lt;
    check(cublasCreate_v2(&handle), "cublasCreate");
    check(cublasLtCreate(&lt), "cublasLtCreate");
    float one = 1, zero = 0;
    uint64_t step_ns[STEPS];
    printf("{\"calls\": [");
    for (int step = 0; step < STEPS; step++) {
        uint64_t start = now_ns();
        nvtxRangePushA("train_step");
        check(cublasSgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 64, &one, memory, 256,
                             memory, 64, &zero, memory, 256), "cublasSgemm_v2");
        said("cublasSgemm_v2", 256, 128, 64, 1, "fp32", 0);
        check(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, 512, 256, 128, &one, memory,
                           CUDA_R_16BF, 128, memory, CUDA_R_16BF, 128, &zero, memory, CUDA_R_16BF,
                           512, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
        said("cublasGemmEx", 512, 256, 128, 1, "bf16", 0);
        check(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, 128, 128, 64, &one,
                                         memory, CUDA_R_16F, 128, 128 * 64, memory, CUDA_R_16F,
                                         128, 64 * 128, &zero, memory, CUDA_R_16F, 128, 128 * 128,
                                         8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "cublasGemmStridedBatchedEx");
        said("cublasGemmStridedBatchedEx", 128, 128, 64, 8, "fp16", 0);
        check(cublasSgemm_v2_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, 300, 200, 100, &one, memory, 300,
                                memory, 100, &zero, memory, 300), "cublasSgemm_v2_64");
        said("cublasSgemm_v2_64", 300, 200, 100, 1, "fp32", 0);
        lt_matmul(lt, 384, 256, 192, 1, memory, memory);
        said("cublasLtMatmul", 384, 256, 192, 1, "bf16", 0);
        lt_matmul(lt, 128, 64, 256, 4, NULL, memory);
        said("cublasLtMatmul", 128, 64, 256, 4, "bf16", 0);
        failures += cudaDeviceSynchronize() != cudaSuccess;
        nvtxRangePop();
        step_ns[step] = now_ns() - start;
    }
    /* outside the steps: a product cuBLAS refuses, launching nothing */
    if (cublasSgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, -1, 8, 8, &one, memory, 8, memory, 8,
                       &zero, memory, 8) != CUBLAS_STATUS_INVALID_VALUE)
        failures++;
    said("cublasSgemm_v2", -1, 8, 8, 1, "fp32", 1);
    printf("],\n \"step_ns\": [");
    for (int step = 0; step < STEPS; step++)
        printf("%s%llu", step ? ", " : "", (unsigned long long)step_ns[step]);
    printf("],\n \"failures\": %d}\n", failures);
    cublasLtDestroy(lt);
    cublasDestroy_v2(handle);
    cudaFree(memory);
    return failures != 0;
}
