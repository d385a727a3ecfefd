/*
 * blas_hooks.h - what the cuBLAS and cuBLASLt hook files share
 * (cublas_hooks.c, cublaslt_hooks.c): the real function behind a hook, the
 * entry table that dlsym hands our hooks out from, the nesting mark and the
 * one record a matrix product makes.
 *
 * cuBLAS is never linked: its functions are looked up on first use, so a
 * process that never loads libcublas.so pays nothing. A call costs one
 * record and no stack walk: where in the model it was made comes from the
 * sampled launches of the kernels it launched (nested in its span).
 */
#ifndef PI_BLAS_HOOKS_H
#define PI_BLAS_HOOKS_H

#include <cublasLt.h>
#include <cublas_api.h>
#include <stdint.h>

#include "core/hook.h"
#include "cuda/entry_points.h"

/* The entries of each hook file, ended by a NULL name. */
extern const struct pi_hook_entry pi_cublas_entries[];
extern const struct pi_hook_entry pi_cublaslt_entries[];

/* pi_blas_real - the real function of @name, kept in @slot: found once
 * (every loaded object but ours), or set by a dlsym we answered */
void *pi_blas_real(void *_Atomic *slot, const char *name);

/* cuBLAS calls in progress on this thread: a product cuBLAS makes through
 * another public entry (cublasSgemm through cublasLt) is recorded once */
extern __thread int pi_blas_depth __attribute__((tls_model("initial-exec")));

/* The real function behind hook @name, as `real`: cuBLAS not loaded is the
 * caller's own error, said once. */
#define BLAS_REAL(type, name)                                                                     \
    __typeof__(type) real = (__typeof__(type))pi_blas_real(&name##_real, #name);                \
    if (!real)                                                                                    \
        return CUBLAS_STATUS_NOT_INITIALIZED;

/* pi_blas_active - record this call: recording, not ours, not nested in cuBLAS */
static inline int pi_blas_active(void)
{
    return pi_blas_depth == 0 && pi_hook_active();
}

/* A product's shape and types, as PI_REC_GEMM keeps them. */
struct pi_gemm_call {
    unsigned api;        /* enum pi_gemm_api */
    unsigned trans_bits; /* PI_GEMM_TRANS_A, PI_GEMM_TRANS_B */
    int64_t m, n, k, batch;
    unsigned a_type, d_type, compute;
};

/* pi_blas_emit - the PI_REC_GEMM of @call, which ran from @start to @end with status @status */
void pi_blas_emit(const struct pi_gemm_call *call, uint64_t start, uint64_t end,
                  cublasStatus_t status);

/* pi_blas_trans_bits - the flag bits of transposes @a and @b (conjugate ones included) */
static inline unsigned pi_blas_trans_bits(cublasOperation_t a, cublasOperation_t b)
{
    return (a != CUBLAS_OP_N ? PI_GEMM_TRANS_A : 0) | (b != CUBLAS_OP_N ? PI_GEMM_TRANS_B : 0);
}

#endif
