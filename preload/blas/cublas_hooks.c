/*
 * cublas_hooks.c - cuBLAS's matrix products, interposed by symbol (and
 * handed out by dlsym): the typed ones (Sgemm, Dgemm, Hgemm), the Ex ones
 * PyTorch calls for half, bfloat16 and tf32, their batched and strided
 * batched forms, each also as the _64 variant with 64-bit sizes. One
 * PI_REC_GEMM each; the kernels it launches are recorded by the CUDA launch
 * hooks inside its span.
 */
#include "blas_hooks.h"

/* cuBLAS's half-precision scalar: cuda_fp16.h defines pi_half for C++ only, and the half
 * products take it by pointer alone. */
typedef struct {
    unsigned short bits;
} pi_half;

/* One timed call @call of the product @shape (a struct pi_gemm_call). */
#define GEMM(shape, call)                                                                         \
    do {                                                                                          \
        if (!pi_blas_active())                                                                    \
            return call;                                                                          \
        struct pi_gemm_call gemm = shape;                                                         \
        uint64_t start = pi_clock_ticks();                                                        \
        pi_blas_depth++;                                                                          \
        cublasStatus_t r = call;                                                                  \
        pi_blas_depth--;                                                                          \
        pi_blas_emit(&gemm, start, pi_clock_ticks(), r);                                          \
        return r;                                                                                 \
    } while (0)

#define SHAPE(api, batch, a_type, d_type, compute)                                                \
    ((struct pi_gemm_call){api, pi_blas_trans_bits(transa, transb), m, n, k, batch, a_type,       \
                           d_type, compute})

/* The typed products: the type of every matrix and the compute type cuBLAS documents. */
#define TYPED(name, api, int_t, elem, cuda_type, compute)                                         \
    static void *_Atomic name##_real;                                                             \
    PI_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                \
                                  cublasOperation_t transb, int_t m, int_t n, int_t k,            \
                                  const elem *alpha, const elem *A, int_t lda, const elem *B,     \
                                  int_t ldb, const elem *beta, elem *C, int_t ldc)                \
    {                                                                                             \
        typedef cublasStatus_t (*fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,        \
                                     int_t, int_t, int_t, const elem *, const elem *, int_t,      \
                                     const elem *, int_t, const elem *, elem *, int_t);           \
        BLAS_REAL(fn, name);                                                                      \
        GEMM(SHAPE(api, 1, cuda_type, cuda_type, compute),                                        \
             real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));         \
    }

TYPED(cublasSgemm_v2, PI_GEMM_SGEMM, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED(cublasSgemm_v2_64, PI_GEMM_SGEMM, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED(cublasDgemm_v2, PI_GEMM_DGEMM, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED(cublasDgemm_v2_64, PI_GEMM_DGEMM, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED(cublasHgemm, PI_GEMM_HGEMM, int, pi_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
TYPED(cublasHgemm_64, PI_GEMM_HGEMM, int64_t, pi_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

/* The typed strided batched products. */
#define STRIDED(name, int_t, elem, cuda_type, compute)                                            \
    static void *_Atomic name##_real;                                                             \
    PI_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                \
                                  cublasOperation_t transb, int_t m, int_t n, int_t k,            \
                                  const elem *alpha, const elem *A, int_t lda, long long sa,      \
                                  const elem *B, int_t ldb, long long sb, const elem *beta,       \
                                  elem *C, int_t ldc, long long sc, int_t batch)                  \
    {                                                                                             \
        typedef cublasStatus_t (*fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,        \
                                     int_t, int_t, int_t, const elem *, const elem *, int_t,      \
                                     long long, const elem *, int_t, long long, const elem *,     \
                                     elem *, int_t, long long, int_t);                            \
        BLAS_REAL(fn, name);                                                                      \
        GEMM(SHAPE(PI_GEMM_STRIDED, batch, cuda_type, cuda_type, compute),                        \
             real(handle, transa, transb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc,   \
                  sc, batch));                                                                    \
    }

STRIDED(cublasSgemmStridedBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
STRIDED(cublasSgemmStridedBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
STRIDED(cublasDgemmStridedBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
STRIDED(cublasDgemmStridedBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
STRIDED(cublasHgemmStridedBatched, int, pi_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
STRIDED(cublasHgemmStridedBatched_64, int64_t, pi_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

/* The typed batched products: arrays of matrix pointers. */
#define BATCHED(name, int_t, elem, cuda_type, compute)                                            \
    static void *_Atomic name##_real;                                                             \
    PI_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                \
                                  cublasOperation_t transb, int_t m, int_t n, int_t k,            \
                                  const elem *alpha, const elem *const A[], int_t lda,            \
                                  const elem *const B[], int_t ldb, const elem *beta,             \
                                  elem *const C[], int_t ldc, int_t batch)                        \
    {                                                                                             \
        typedef cublasStatus_t (*fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,        \
                                     int_t, int_t, int_t, const elem *, const elem *const *,      \
                                     int_t, const elem *const *, int_t, const elem *,             \
                                     elem *const *, int_t, int_t);                                \
        BLAS_REAL(fn, name);                                                                      \
        GEMM(SHAPE(PI_GEMM_BATCHED, batch, cuda_type, cuda_type, compute),                        \
             real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch));  \
    }

BATCHED(cublasSgemmBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
BATCHED(cublasSgemmBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
BATCHED(cublasDgemmBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
BATCHED(cublasDgemmBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
BATCHED(cublasHgemmBatched, int, pi_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
BATCHED(cublasHgemmBatched_64, int64_t, pi_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

/* cublasSgemmEx: typed matrices, fp32 compute. */
#define SGEMM_EX(name, int_t)                                                                     \
    static void *_Atomic name##_real;                                                             \
    PI_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                \
                                  cublasOperation_t transb, int_t m, int_t n, int_t k,            \
                                  const float *alpha, const void *A, cudaDataType at, int_t lda,  \
                                  const void *B, cudaDataType bt, int_t ldb, const float *beta,   \
                                  void *C, cudaDataType ct, int_t ldc)                            \
    {                                                                                             \
        typedef cublasStatus_t (*fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,        \
                                     int_t, int_t, int_t, const float *, const void *,            \
                                     cudaDataType, int_t, const void *, cudaDataType, int_t,      \
                                     const float *, void *, cudaDataType, int_t);                 \
        BLAS_REAL(fn, name);                                                                      \
        GEMM(SHAPE(PI_GEMM_SGEMM_EX, 1, at, ct, CUBLAS_COMPUTE_32F),                              \
             real(handle, transa, transb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct,    \
                  ldc));                                                                          \
    }

SGEMM_EX(cublasSgemmEx, int)
SGEMM_EX(cublasSgemmEx_64, int64_t)

/* cublasGemmEx: typed matrices and a compute type. */
#define GEMM_EX(name, int_t)                                                                      \
    static void *_Atomic name##_real;                                                             \
    PI_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                \
                                  cublasOperation_t transb, int_t m, int_t n, int_t k,            \
                                  const void *alpha, const void *A, cudaDataType at, int_t lda,   \
                                  const void *B, cudaDataType bt, int_t ldb, const void *beta,    \
                                  void *C, cudaDataType ct, int_t ldc,                            \
                                  cublasComputeType_t compute, cublasGemmAlgo_t algo)             \
    {                                                                                             \
        typedef cublasStatus_t (*fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,        \
                                     int_t, int_t, int_t, const void *, const void *,             \
                                     cudaDataType, int_t, const void *, cudaDataType, int_t,      \
                                     const void *, void *, cudaDataType, int_t,                   \
                                     cublasComputeType_t, cublasGemmAlgo_t);                      \
        BLAS_REAL(fn, name);                                                                      \
        GEMM(SHAPE(PI_GEMM_GEMM_EX, 1, at, ct, compute),                                          \
             real(handle, transa, transb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct,    \
                  ldc, compute, algo));                                                           \
    }

GEMM_EX(cublasGemmEx, int)
GEMM_EX(cublasGemmEx_64, int64_t)

/* cublasGemmStridedBatchedEx: PyTorch's bmm and baddbmm. */
#define STRIDED_EX(name, int_t)                                                                   \
    static void *_Atomic name##_real;                                                             \
    PI_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                \
                                  cublasOperation_t transb, int_t m, int_t n, int_t k,            \
                                  const void *alpha, const void *A, cudaDataType at, int_t lda,   \
                                  long long sa, const void *B, cudaDataType bt, int_t ldb,        \
                                  long long sb, const void *beta, void *C, cudaDataType ct,       \
                                  int_t ldc, long long sc, int_t batch,                           \
                                  cublasComputeType_t compute, cublasGemmAlgo_t algo)             \
    {                                                                                             \
        typedef cublasStatus_t (*fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,        \
                                     int_t, int_t, int_t, const void *, const void *,             \
                                     cudaDataType, int_t, long long, const void *, cudaDataType,  \
                                     int_t, long long, const void *, void *, cudaDataType, int_t, \
                                     long long, int_t, cublasComputeType_t, cublasGemmAlgo_t);    \
        BLAS_REAL(fn, name);                                                                      \
        GEMM(SHAPE(PI_GEMM_STRIDED_EX, batch, at, ct, compute),                                   \
             real(handle, transa, transb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta,   \
                  C, ct, ldc, sc, batch, compute, algo));                                         \
    }

STRIDED_EX(cublasGemmStridedBatchedEx, int)
STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)

/* cublasGemmBatchedEx: arrays of matrix pointers, typed. */
#define BATCHED_EX(name, int_t)                                                                   \
    static void *_Atomic name##_real;                                                             \
    PI_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                \
                                  cublasOperation_t transb, int_t m, int_t n, int_t k,            \
                                  const void *alpha, const void *const A[], cudaDataType at,      \
                                  int_t lda, const void *const B[], cudaDataType bt, int_t ldb,   \
                                  const void *beta, void *const C[], cudaDataType ct, int_t ldc,  \
                                  int_t batch, cublasComputeType_t compute,                       \
                                  cublasGemmAlgo_t algo)                                          \
    {                                                                                             \
        typedef cublasStatus_t (*fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,        \
                                     int_t, int_t, int_t, const void *, const void *const *,      \
                                     cudaDataType, int_t, const void *const *, cudaDataType,      \
                                     int_t, const void *, void *const *, cudaDataType, int_t,     \
                                     int_t, cublasComputeType_t, cublasGemmAlgo_t);               \
        BLAS_REAL(fn, name);                                                                      \
        GEMM(SHAPE(PI_GEMM_BATCHED_EX, batch, at, ct, compute),                                   \
             real(handle, transa, transb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct,    \
                  ldc, batch, compute, algo));                                                    \
    }

BATCHED_EX(cublasGemmBatchedEx, int)
BATCHED_EX(cublasGemmBatchedEx_64, int64_t)

#define ENTRY(name) {#name, (void *)name, &name##_real}
const struct pi_hook_entry pi_cublas_entries[] = {
    ENTRY(cublasSgemm_v2), ENTRY(cublasSgemm_v2_64), ENTRY(cublasDgemm_v2),
    ENTRY(cublasDgemm_v2_64), ENTRY(cublasHgemm), ENTRY(cublasHgemm_64),
    ENTRY(cublasSgemmStridedBatched), ENTRY(cublasSgemmStridedBatched_64),
    ENTRY(cublasDgemmStridedBatched), ENTRY(cublasDgemmStridedBatched_64),
    ENTRY(cublasHgemmStridedBatched), ENTRY(cublasHgemmStridedBatched_64),
    ENTRY(cublasSgemmBatched), ENTRY(cublasSgemmBatched_64), ENTRY(cublasDgemmBatched),
    ENTRY(cublasDgemmBatched_64), ENTRY(cublasHgemmBatched), ENTRY(cublasHgemmBatched_64),
    ENTRY(cublasSgemmEx), ENTRY(cublasSgemmEx_64), ENTRY(cublasGemmEx), ENTRY(cublasGemmEx_64),
    ENTRY(cublasGemmStridedBatchedEx), ENTRY(cublasGemmStridedBatchedEx_64),
    ENTRY(cublasGemmBatchedEx), ENTRY(cublasGemmBatchedEx_64), {NULL, NULL, NULL}};
