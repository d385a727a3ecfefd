/*
 * kernel_names.h - a kernel's name as a row can show it. A demangled CUDA
 * kernel name runs to hundreds of characters, and PyTorch's elementwise
 * kernels all begin "void at::native::elementwise_kernel<128, 2, ...":
 * cut at a column width they read the same. The short name is the
 * function without return type, namespaces and template arguments, and,
 * where its template arguments name one, the functor or op that tells it
 * apart ("elementwise_kernel (CUDAFunctor_add)", "reduce_kernel
 * (sum_functor)", "Kernel2 (cutlass_80_simt_sgemm_128x32_8x5_nn_align1)").
 */
#ifndef PI_KERNEL_NAMES_H
#define PI_KERNEL_NAMES_H

#include <stddef.h>

#define PI_KERNEL_SHORT_NAME 160

/* pi_kernel_short_name - the short name of the demangled kernel name @full into @out */
void pi_kernel_short_name(const char *full, char *out, size_t size);

/**
 * pi_kernel_short_names - the short names of @count kernels, no two alike: where two read the
 * same, the next functor or op back is added, then the leading numbers of the template
 * arguments ("reduce_kernel<128, 4> (sum_functor)"), then "#2", "#3"
 * @full: the demangled names, all different
 * @out: receives one name each
 */
void pi_kernel_short_names(const char *const *full, size_t count,
                           char (*out)[PI_KERNEL_SHORT_NAME]);

#endif
