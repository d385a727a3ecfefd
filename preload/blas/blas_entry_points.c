/*
 * blas_entry_points.c - cuBLAS functions fetched with dlsym get our hooks
 * (blas_entry_points.h), from the entry tables of the hook files.
 */
#include "blas_entry_points.h"

#include <string.h>

#include "blas_hooks.h"
#include "cuda/entry_points.h"

int pi_is_blas_name(const char *name)
{
    return name && strncmp(name, "cublas", 6) == 0 && name[6] >= 'A' && name[6] <= 'Z';
}

void *pi_blas_wrap_symbol(const char *name, void *real)
{
    const struct pi_hook_entry *const tables[] = {pi_cublas_entries, pi_cublaslt_entries};
    return pi_hook_from_tables(tables, 2, name, real);
}
