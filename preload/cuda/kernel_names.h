/*
 * kernel_names.h - the name of what a launch runs, from its handle
 * (kernel_names.c): a CUfunction (cuModuleGetFunction), a CUkernel
 * (cuLibraryGetKernel, and cudaKernel_t, which is the same type:
 * driver_types.h) or the host stub nvcc generates.
 */
#ifndef PI_KERNEL_NAMES_H
#define PI_KERNEL_NAMES_H

#include <stdint.h>

/**
 * pi_cuda_handle_name - name id of launch handle @handle
 *
 * Remembered when the handle was looked up; otherwise (a handle obtained
 * before attach, or by a path we do not wrap) asked of the driver once,
 * cuFuncGetName for a CUfunction, cuKernelGetName for a CUkernel, and
 * remembered, "(unknown kernel)" included, so a launch never asks twice.
 * Return: the name id, 0 for a NULL handle.
 */
uint32_t pi_cuda_handle_name(const void *handle);

/* pi_cuda_name_kernel_from_stub - @kernel (from __cudaGetKernel) runs the kernel of host stub @stub */
void pi_cuda_name_kernel_from_stub(const void *kernel, const void *stub);

#endif
