/*
 * prog_cuda_driver: reaches the driver only as cuBLAS and Triton do,
 * through dlopen + dlsym + cuGetProcAddress, never through the PLT.
 *
 *   cuMemAlloc 8 MiB (by cuGetProcAddress), freed; cuMemAlloc_v2 16 MiB
 *   (by dlsym), leaks; a VMM chunk of 2 MiB created, mapped, unmapped,
 *   released; kernel "_Z6kernelPf" (cuModuleGetFunction) 5 x 3 ms and
 *   "_Z4gemmv" (cuLibraryGetKernel) 4 x 2 ms, then cuCtxSynchronize.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef CUresult (*get_proc_t)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

static get_proc_t get_proc;

static void *entry(const char *name, int version)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult status;
    get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    return fn;
}

int main(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 2;
    get_proc = (get_proc_t)dlsym(lib, "cuGetProcAddress_v2");
    CUresult (*init)(unsigned) = entry("cuInit", 2000);
    CUresult (*alloc)(CUdeviceptr *, size_t) = entry("cuMemAlloc", 3020);
    CUresult (*release)(CUdeviceptr) = entry("cuMemFree", 3020);
    CUresult (*alloc_by_dlsym)(CUdeviceptr *, size_t) = dlsym(lib, "cuMemAlloc_v2");
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long) = entry("cuMemCreate", 10020);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                    unsigned long long) = entry("cuMemMap", 10020);
    CUresult (*unmap)(CUdeviceptr, size_t) = entry("cuMemUnmap", 10020);
    CUresult (*vmm_release)(CUmemGenericAllocationHandle) = entry("cuMemRelease", 10020);
    CUresult (*load)(CUmodule *, const void *) = entry("cuModuleLoadData", 2000);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *) = entry("cuModuleGetFunction", 2000);
    CUresult (*load_library)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,
                             CUlibraryOption *, void **, unsigned) = entry("cuLibraryLoadData", 12000);
    CUresult (*get_kernel)(CUkernel *, CUlibrary, const char *) = entry("cuLibraryGetKernel", 12000);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **) = entry("cuLaunchKernel", 4000);
    CUresult (*synchronize)(void) = entry("cuCtxSynchronize", 2000);
    if (!init || !alloc || !release || !alloc_by_dlsym || !create || !map || !unmap ||
        !vmm_release || !load || !get_function || !load_library || !get_kernel || !launch ||
        !synchronize)
        return 3;

    int failures = init(0) != CUDA_SUCCESS;
    CUdeviceptr a, b;
    failures += alloc(&a, 8 << 20) != CUDA_SUCCESS;
    failures += alloc_by_dlsym(&b, 16 << 20) != CUDA_SUCCESS;
    CUmemGenericAllocationHandle chunk;
    CUmemAllocationProp prop = {0};
    failures += create(&chunk, 2 << 20, &prop, 0) != CUDA_SUCCESS;
    failures += map(a, 2 << 20, 0, chunk, 0) != CUDA_SUCCESS;

    CUmodule module;
    CUfunction kernel;
    CUlibrary library;
    CUkernel gemm;
    failures += load(&module, "image") != CUDA_SUCCESS;
    failures += get_function(&kernel, module, "_Z6kernelPf") != CUDA_SUCCESS;
    failures += load_library(&library, "image", NULL, NULL, 0, NULL, NULL, 0) != CUDA_SUCCESS;
    failures += get_kernel(&gemm, library, "_Z4gemmv") != CUDA_SUCCESS;
    uint64_t ns = 3000000;
    void *args[] = {&ns};
    for (int i = 0; i < 5; i++)
        failures += launch(kernel, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS;
    ns = 2000000;
    for (int i = 0; i < 4; i++)
        failures += launch((CUfunction)gemm, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS;
    failures += synchronize() != CUDA_SUCCESS;

    failures += unmap(a, 2 << 20) != CUDA_SUCCESS;
    failures += vmm_release(chunk) != CUDA_SUCCESS;
    failures += release(a) != CUDA_SUCCESS;
    printf(failures ? "failed\n" : "ok\n");
    return failures;
}
