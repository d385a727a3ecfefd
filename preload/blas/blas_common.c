/*
 * blas_common.c - what the cuBLAS hooks share (blas_hooks.h): finding the
 * real functions and the record.
 */
#include "blas_hooks.h"

#include <errno.h>
#include <stdatomic.h>

#include "core/diagnostics.h"
#include "cuda/device_info.h"
#include "cuda/entry_points.h"

__thread int pi_blas_depth __attribute__((tls_model("initial-exec")));

void *pi_blas_real(void *_Atomic *slot, const char *name)
{
    void *fn = pi_resolve_slot(slot, name);
    if (__builtin_expect(fn == NULL, 0)) {
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            pi_diag("%s called but no loaded library defines it: answered "
                    "CUBLAS_STATUS_NOT_INITIALIZED",
                    name);
    }
    return fn;
}

void pi_blas_emit(const struct pi_gemm_call *c, uint64_t start, uint64_t end,
                  cublasStatus_t status)
{
    int saved = errno;
    pi_cuda_note_current_device(start);
    pi_emit(PI_REC_GEMM, PI_GEMM_FLAGS(c->api, c->trans_bits, status != CUBLAS_STATUS_SUCCESS),
            start, end - start, PI_GEMM_PAIR(c->m < 0 ? 0 : c->m, c->n < 0 ? 0 : c->n),
            PI_GEMM_PAIR(c->k < 0 ? 0 : c->k, c->batch < 0 ? 0 : c->batch),
            PI_GEMM_TYPES(c->a_type, c->d_type, c->compute));
    errno = saved;
}
