/*
 * fake_cublas.c - a libcublas.so.13 for the tests, built on the real
 * cublas_api.h of the nvidia-cublas wheel, with the products the test
 * program calls. Device work follows fake_cublas.h.
 */
#include <cublas_api.h>
#include <stdlib.h>

#include "fake_cublas.h"

#define EXPORT __attribute__((visibility("default")))

struct cublasContext {
    cudaStream_t stream;
};

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    *handle = calloc(1, sizeof(**handle));
    return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

/* The work of one product, or why there is none. */
static cublasStatus_t work(cublasHandle_t handle, int64_t m, int64_t n, int64_t k, int64_t batch,
                           cudaDataType type, int split)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0 || batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    return fake_gemm_launch(FAKE_GEMM_FLOPS(m, n, k, batch), type, split, handle->stream)
               ? CUBLAS_STATUS_EXECUTION_FAILED
               : CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t ta,
                                     cublasOperation_t tb, int m, int n, int k, const float *alpha,
                                     const float *A, int lda, const float *B, int ldb,
                                     const float *beta, float *C, int ldc)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,
        (void)ldc;
    return work(handle, m, n, k, 1, CUDA_R_32F, 0);
}

EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t ta,
                                        cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                                        const float *alpha, const float *A, int64_t lda,
                                        const float *B, int64_t ldb, const float *beta, float *C,
                                        int64_t ldc)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,
        (void)ldc;
    return work(handle, m, n, k, 1, CUDA_R_32F, 0);
}

EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta,
                                   cublasOperation_t tb, int m, int n, int k, const void *alpha,
                                   const void *A, cudaDataType at, int lda, const void *B,
                                   cudaDataType bt, int ldb, const void *beta, void *C,
                                   cudaDataType ct, int ldc, cublasComputeType_t compute,
                                   cublasGemmAlgo_t algo)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)at, (void)lda, (void)B, (void)bt, (void)ldb,
        (void)beta, (void)C, (void)ct, (void)ldc, (void)compute, (void)algo;
    return work(handle, m, n, k, 1, at, 0);
}

EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType at, int lda, long long sa, const void *B,
    cudaDataType bt, int ldb, long long sb, const void *beta, void *C, cudaDataType ct, int ldc,
    long long sc, int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)at, (void)lda, (void)sa, (void)B, (void)bt,
        (void)ldb, (void)sb, (void)beta, (void)C, (void)ct, (void)ldc, (void)sc, (void)compute,
        (void)algo;
    return work(handle, m, n, k, batch, at, 1);
}
