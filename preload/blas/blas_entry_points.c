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

static const struct pi_blas_entry *entry_of(const char *name)
{
    const struct pi_blas_entry *tables[] = {pi_cublas_entries, pi_cublaslt_entries};
    for (unsigned t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
        for (const struct pi_blas_entry *e = tables[t]; e->name; e++)
            if (strcmp(e->name, name) == 0)
                return e;
    return NULL;
}

void *pi_blas_wrap_symbol(const char *name, void *real)
{
    const struct pi_blas_entry *e = real ? entry_of(name) : NULL;
    return e ? pi_hook_behind(e->real, e->hook, real) : real;
}
