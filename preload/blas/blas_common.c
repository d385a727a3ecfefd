/*
 * blas_common.c - what the cuBLAS hooks share (blas_hooks.h): finding the
 * real functions, handing our hooks out to dlsym, and the record.
 */
#include "blas_entry_points.h"
#include "blas_hooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "core/diagnostics.h"
#include "core/loaded_symbols.h"
#include "cuda/device_info.h"

__thread int pi_blas_depth __attribute__((tls_model("initial-exec")));

void *pi_blas_real(void *_Atomic *slot, const char *name)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    if (__builtin_expect(fn != NULL, 1))
        return fn;
    fn = pi_loaded_symbol(name);
    if (!fn) {
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            pi_diag("%s called but no loaded library defines it: answered "
                    "CUBLAS_STATUS_NOT_INITIALIZED",
                    name);
        return NULL;
    }
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(slot, &expected, fn))
        fn = expected; /* a dlsym we answered set it first */
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

/* ---- dlsym ---- */

int pi_is_blas_name(const char *name)
{
    return name && strncmp(name, "cublas", 6) == 0 && name[6] >= 'A' && name[6] <= 'Z';
}

static const struct pi_blas_entry *entry_of(const char *name)
{
    const struct pi_blas_entry *tables[] = {pi_cublas_entries, pi_cublaslt_entries};
    for (unsigned t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
        for (const struct pi_blas_entry *e = tables[t]; e->name; e++)
            if (strcmp(e->name, name) == 0)
                return e;
    return NULL;
}

/* Whether @a and @b are defined in the same loaded object. */
static int same_object(const void *a, const void *b)
{
    Dl_info x, y;
    return dladdr(a, &x) && dladdr(b, &y) && x.dli_fbase == y.dli_fbase;
}

void *pi_blas_wrap_symbol(const char *name, void *real)
{
    const struct pi_blas_entry *e = real ? entry_of(name) : NULL;
    if (!e || real == e->hook)
        return real;
    void *expected = NULL;
    if (atomic_compare_exchange_strong(e->real, &expected, real) || expected == real ||
        same_object(expected, real))
        return e->hook;
    return real; /* a second libcublas: its calls go unrecorded rather than to the first */
}
