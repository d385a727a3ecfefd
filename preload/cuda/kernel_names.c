/*
 * kernel_names.c - launch handles to names (see kernel_names.h).
 */
#include "kernel_names.h"

#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>

#include "core/guard.h"
#include "cuda_common.h"

#define UNKNOWN "(unknown kernel)"

/* cuda.h: cuFuncGetName names a CUfunction, cuKernelGetName a CUkernel;
 * a launch may be given either (cuLaunchKernel takes both). */
static const char *ask_driver(const void *handle)
{
    static CUresult (*function_name)(const char **, CUfunction);
    static CUresult (*kernel_name)(const char **, CUkernel);
    static int looked;
    if (!looked) {
        function_name = (CUresult(*)(const char **, CUfunction))pi_loaded_symbol("cuFuncGetName");
        kernel_name = (CUresult(*)(const char **, CUkernel))pi_loaded_symbol("cuKernelGetName");
        looked = 1;
    }
    const char *text = NULL;
    if (function_name && function_name(&text, (CUfunction)handle) == CUDA_SUCCESS && text)
        return text;
    text = NULL;
    if (kernel_name && kernel_name(&text, (CUkernel)handle) == CUDA_SUCCESS && text)
        return text;
    return NULL;
}

uint32_t pi_cuda_handle_name(const void *handle)
{
    uint32_t name = pi_cuda_function_name(handle);
    if (name || !handle)
        return name;
    int saved = errno;
    int guard = pi_guard_enter();
    const char *text = ask_driver(handle);
    pi_guard_restore(guard);
    pi_cuda_remember_function(handle, text ? text : UNKNOWN);
    errno = saved;
    return pi_cuda_function_name(handle);
}

void pi_cuda_name_kernel_from_stub(const void *kernel, const void *stub)
{
    if (!kernel || !stub || pi_cuda_function_name(kernel))
        return;
    int saved = errno;
    int guard = pi_guard_enter();
    Dl_info info;
    /* the stub's symbol is the kernel's mangled name (when the program exports it) */
    if (dladdr(stub, &info) && info.dli_sname && info.dli_saddr == stub)
        pi_cuda_remember_function(kernel, info.dli_sname);
    pi_guard_restore(guard);
    errno = saved;
}
