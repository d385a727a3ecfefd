/*
 * cublaslt_hooks.c - cublasLtMatmul, PyTorch's path for addmm, linear
 * layers with a bias (epilogue BIAS) and most bfloat16 products. The shape
 * is in the descriptors: transposes and compute type in the matmul
 * descriptor, type, rows, columns and batch count in the matrix layouts. They
 * are read after the call through the real library's getters (no table of
 * descriptors to keep in step with their creation and changes), a handful
 * of calls outside the span that is timed.
 *
 * D = op(A)·op(B): D is m×n; op(A) is m×k, so A's layout is m×k untransposed
 * and k×m transposed. The batch is D's batch count.
 */
#include "blas_hooks.h"

static void *_Atomic cublasLtMatmul_real, *_Atomic cublasLtMatmulDescGetAttribute_real,
    *_Atomic cublasLtMatrixLayoutGetAttribute_real;

typedef cublasStatus_t (*desc_get_fn)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                      void *, size_t, size_t *);
typedef cublasStatus_t (*layout_get_fn)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                                        void *, size_t, size_t *);

/* An int32 attribute of the matmul descriptor, @otherwise when it cannot be read. */
static int32_t desc_int(desc_get_fn get, cublasLtMatmulDesc_t desc,
                        cublasLtMatmulDescAttributes_t attribute, int32_t otherwise)
{
    int32_t value = otherwise;
    size_t written = 0;
    if (!get || get(desc, attribute, &value, sizeof(value), &written) != CUBLAS_STATUS_SUCCESS ||
        written != sizeof(value))
        return otherwise;
    return value;
}

/* A layout attribute of @size bytes (4 or 8), widened; @otherwise when it cannot be read. */
static int64_t layout_value(layout_get_fn get, cublasLtMatrixLayout_t layout,
                            cublasLtMatrixLayoutAttribute_t attribute, size_t size,
                            int64_t otherwise)
{
    union {
        int32_t i32;
        uint64_t u64;
    } value = {0};
    size_t written = 0;
    if (!get || !layout ||
        get(layout, attribute, &value, size, &written) != CUBLAS_STATUS_SUCCESS || written != size)
        return otherwise;
    return size == sizeof(int32_t) ? value.i32 : (int64_t)value.u64;
}

/* The product's shape and types, from its descriptors. */
static void read_shape(struct pi_gemm_call *c, cublasLtMatmulDesc_t desc,
                       cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t d)
{
    desc_get_fn get_desc = (desc_get_fn)pi_blas_real(&cublasLtMatmulDescGetAttribute_real,
                                                     "cublasLtMatmulDescGetAttribute");
    layout_get_fn get_layout = (layout_get_fn)pi_blas_real(
        &cublasLtMatrixLayoutGetAttribute_real, "cublasLtMatrixLayoutGetAttribute");
    int32_t transa = desc_int(get_desc, desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
    int32_t transb = desc_int(get_desc, desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
    c->trans_bits = pi_blas_trans_bits((cublasOperation_t)transa, (cublasOperation_t)transb);
    c->compute = (unsigned)desc_int(get_desc, desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 0);
    c->m = layout_value(get_layout, d, CUBLASLT_MATRIX_LAYOUT_ROWS, 8, 0);
    c->n = layout_value(get_layout, d, CUBLASLT_MATRIX_LAYOUT_COLS, 8, 0);
    c->k = layout_value(get_layout, a,
                        transa == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_COLS
                                              : CUBLASLT_MATRIX_LAYOUT_ROWS,
                        8, 0);
    c->batch = layout_value(get_layout, d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 4, 1);
    c->a_type = (unsigned)layout_value(get_layout, a, CUBLASLT_MATRIX_LAYOUT_TYPE, 4, 0);
    c->d_type = (unsigned)layout_value(get_layout, d, CUBLASLT_MATRIX_LAYOUT_TYPE, 4, 0);
}

PI_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                        const void *alpha, const void *A,
                                        cublasLtMatrixLayout_t adesc, const void *B,
                                        cublasLtMatrixLayout_t bdesc, const void *beta,
                                        const void *C, cublasLtMatrixLayout_t cdesc, void *D,
                                        cublasLtMatrixLayout_t ddesc,
                                        const cublasLtMatmulAlgo_t *algo, void *workspace,
                                        size_t workspace_bytes, cudaStream_t stream)
{
    typedef cublasStatus_t (*fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                 const void *, cublasLtMatrixLayout_t, const void *,
                                 cublasLtMatrixLayout_t, const void *, const void *,
                                 cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                 const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);
    BLAS_REAL(fn, cublasLtMatmul);
    if (!pi_blas_active())
        return real(handle, desc, alpha, A, adesc, B, bdesc, beta, C, cdesc, D, ddesc, algo,
                    workspace, workspace_bytes, stream);
    uint64_t start = pi_clock_ticks();
    pi_blas_depth++;
    cublasStatus_t r = real(handle, desc, alpha, A, adesc, B, bdesc, beta, C, cdesc, D, ddesc,
                            algo, workspace, workspace_bytes, stream);
    uint64_t end = pi_clock_ticks();
    struct pi_gemm_call call = {.api = PI_GEMM_LT_MATMUL};
    read_shape(&call, desc, adesc, ddesc);
    pi_blas_depth--;
    pi_blas_emit(&call, start, end, r);
    return r;
}

#define ENTRY(name) {#name, (void *)name, &name##_real}
const struct pi_hook_entry pi_cublaslt_entries[] = {ENTRY(cublasLtMatmul), {NULL, NULL, NULL}};
