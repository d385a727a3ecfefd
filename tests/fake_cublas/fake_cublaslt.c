/*
 * fake_cublaslt.c - a libcublasLt.so.13 for the tests, built on the real
 * cublasLt.h: handles, matmul descriptors and matrix layouts that keep
 * what they are told, and cublasLtMatmul, whose device work follows
 * fake_cublas.h for the shape the descriptors give.
 */
#include <cublasLt.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cublas.h"

#define EXPORT __attribute__((visibility("default")))

struct cublasLtContext {
    int unused;
};

/* Where each attribute lives in the opaque descriptors, and its size. */
enum { D_COMPUTE, D_SCALE, D_POINTER_MODE, D_TRANSA, D_TRANSB, D_EPILOGUE, D_COUNT };
enum { L_TYPE, L_ORDER, L_ROWS, L_COLS, L_LD, L_BATCH, L_STRIDE, L_COUNT };

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
    *handle = calloc(1, sizeof(**handle));
    return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                               cublasComputeType_t compute, cudaDataType_t scale)
{
    *desc = calloc(1, sizeof(**desc));
    if (!*desc)
        return CUBLAS_STATUS_ALLOC_FAILED;
    (*desc)->data[D_COMPUTE] = (uint64_t)compute;
    (*desc)->data[D_SCALE] = (uint64_t)scale;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
    free(desc);
    return CUBLAS_STATUS_SUCCESS;
}

/* The slot of a matmul attribute kept here (all int32), -1 for any other. */
static int desc_slot(cublasLtMatmulDescAttributes_t attribute)
{
    switch (attribute) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return D_COMPUTE;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return D_SCALE;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return D_POINTER_MODE;
    case CUBLASLT_MATMUL_DESC_TRANSA: return D_TRANSA;
    case CUBLASLT_MATMUL_DESC_TRANSB: return D_TRANSB;
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return D_EPILOGUE;
    default: return -1;
    }
}

/* The slot and size of a layout attribute, -1 for one not kept. */
static int layout_slot(cublasLtMatrixLayoutAttribute_t attribute, size_t *size)
{
    *size = attribute == CUBLASLT_MATRIX_LAYOUT_ROWS || attribute == CUBLASLT_MATRIX_LAYOUT_COLS ||
                    attribute == CUBLASLT_MATRIX_LAYOUT_LD ||
                    attribute == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET
                ? 8
                : 4;
    switch (attribute) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return L_TYPE;
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return L_ORDER;
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return L_ROWS;
    case CUBLASLT_MATRIX_LAYOUT_COLS: return L_COLS;
    case CUBLASLT_MATRIX_LAYOUT_LD: return L_LD;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return L_BATCH;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return L_STRIDE;
    default: return -1;
    }
}

/* As cuBLASLt: the size must be the attribute's own. */
static cublasStatus_t set_word(uint64_t *word, size_t size, const void *buf, size_t given)
{
    if (!buf || given != size)
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t i32;
    if (size == 4)
        memcpy(&i32, buf, 4), *word = (uint64_t)(int64_t)i32;
    else
        memcpy(word, buf, 8);
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t get_word(uint64_t word, size_t size, void *buf, size_t given,
                               size_t *written)
{
    if (written)
        *written = size;
    if (given == 0 && written)
        return CUBLAS_STATUS_SUCCESS;
    if (!buf || given != size)
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t i32 = (int32_t)word;
    if (size == 4)
        memcpy(buf, &i32, 4);
    else
        memcpy(buf, &word, 8);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                     cublasLtMatmulDescAttributes_t attribute,
                                                     const void *buf, size_t size)
{
    int slot = desc_slot(attribute);
    return slot < 0 ? CUBLAS_STATUS_SUCCESS /* kept nowhere: the bias pointer... */
                    : set_word(&desc->data[slot], 4, buf, size);
}

EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                                     cublasLtMatmulDescAttributes_t attribute,
                                                     void *buf, size_t size, size_t *written)
{
    int slot = desc_slot(attribute);
    return slot < 0 ? CUBLAS_STATUS_INVALID_VALUE
                    : get_word(desc->data[slot], 4, buf, size, written);
}

EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                                 uint64_t rows, uint64_t cols, int64_t ld)
{
    *layout = calloc(1, sizeof(**layout));
    if (!*layout)
        return CUBLAS_STATUS_ALLOC_FAILED;
    uint64_t *d = (*layout)->data;
    d[L_TYPE] = (uint64_t)type, d[L_ROWS] = rows, d[L_COLS] = cols, d[L_LD] = (uint64_t)ld;
    d[L_BATCH] = 1;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
{
    free(layout);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                       cublasLtMatrixLayoutAttribute_t attribute,
                                                       const void *buf, size_t given)
{
    size_t size;
    int slot = layout_slot(attribute, &size);
    return slot < 0 ? CUBLAS_STATUS_INVALID_VALUE
                    : set_word(&layout->data[slot], size, buf, given);
}

EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout,
                                                       cublasLtMatrixLayoutAttribute_t attribute,
                                                       void *buf, size_t given, size_t *written)
{
    size_t size;
    int slot = layout_slot(attribute, &size);
    return slot < 0 ? CUBLAS_STATUS_INVALID_VALUE
                    : get_word(layout->data[slot], size, buf, given, written);
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                     const void *alpha, const void *A, cublasLtMatrixLayout_t ad,
                                     const void *B, cublasLtMatrixLayout_t bd, const void *beta,
                                     const void *C, cublasLtMatrixLayout_t cd, void *D,
                                     cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t *algo,
                                     void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)alpha, (void)A, (void)B, (void)bd, (void)beta, (void)C, (void)cd, (void)D, (void)algo,
        (void)workspace, (void)workspace_bytes;
    if (!handle || !desc || !ad || !dd)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    uint64_t m = dd->data[L_ROWS], n = dd->data[L_COLS];
    uint64_t k = desc->data[D_TRANSA] == CUBLAS_OP_N ? ad->data[L_COLS] : ad->data[L_ROWS];
    uint64_t batch = dd->data[L_BATCH];
    return fake_gemm_launch(FAKE_GEMM_FLOPS(m, n, k, batch), (int)ad->data[L_TYPE], 0, stream)
               ? CUBLAS_STATUS_EXECUTION_FAILED
               : CUBLAS_STATUS_SUCCESS;
}
