/*
 * blas_entry_points.h - cuBLAS and cuBLASLt functions fetched with dlsym:
 * the dlsym hook (cuda/dlsym_hook.c) hands out our hooks for them, through
 * the pair that library.c registers, since cuda/ may not call blas/.
 */
#ifndef PI_BLAS_ENTRY_POINTS_H
#define PI_BLAS_ENTRY_POINTS_H

/* pi_is_blas_name - "cublas" then an upper-case letter ("cublasSgemm_v2", "cublasLtMatmul") */
int pi_is_blas_name(const char *name);

/**
 * pi_blas_wrap_symbol - our hook for the cuBLAS function @name that dlsym
 * found at @real, keeping @real as the function it calls
 * Return: our hook, or @real when @name is not hooked or another
 * library's function already sits behind it.
 */
void *pi_blas_wrap_symbol(const char *name, void *real);

#endif
