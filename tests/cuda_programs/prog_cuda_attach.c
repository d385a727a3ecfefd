/*
 * prog_cuda_attach: started without the profiler, for the attach test.
 * Before printing "started" it fills a static table of driver entry
 * points through cuGetProcAddress, as PyTorch's driver API does (the
 * runtime, the fake cudart, keeps a table of its own), and fetches its
 * kernels: a module function, a library kernel (as Triton and cuBLAS hold
 * them) and the runtime's handle of a host stub (as nvcc 13's <<<>>> does,
 * with __cudaGetKernel). Then every 2 ms until killed:
 *
 *   cudaMalloc 1 MiB, cudaFree           (runtime, through cudart's table)
 *   cuMemAlloc 2 MiB, cuMemFree          (this program's table)
 *   cuLaunchKernel "_Z6kernelPf", 10 us  (this program's table)
 *   cuLaunchKernel "_Z4gemmv", 10 us     (a CUkernel, this program's table)
 *   __cudaLaunchKernel "_Z4stepv", 10 us (the runtime's handle)
 *   cuCtxSynchronize                     (this program's table)
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define MiB (1u << 20)

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *stub);
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
void step_stub(void) __asm__("_Z4stepv");
void step_stub(void) {}

typedef CUresult (*get_proc_t)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

static struct {
    CUresult (*init)(unsigned);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*release)(CUdeviceptr);
    CUresult (*load)(CUmodule *, const void *);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*load_library)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,
                             CUlibraryOption *, void **, unsigned);
    CUresult (*get_kernel)(CUkernel *, CUlibrary, const char *);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*synchronize)(void);
} driver;

static int resolve(get_proc_t get_proc, const char *name, int version, void *slot)
{
    CUdriverProcAddressQueryResult status;
    return get_proc(name, (void **)slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) ==
           CUDA_SUCCESS;
}

int main(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    get_proc_t get_proc = lib ? (get_proc_t)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (!get_proc || !resolve(get_proc, "cuInit", 2000, &driver.init) ||
        !resolve(get_proc, "cuMemAlloc", 3020, &driver.alloc) ||
        !resolve(get_proc, "cuMemFree", 3020, &driver.release) ||
        !resolve(get_proc, "cuModuleLoadData", 2000, &driver.load) ||
        !resolve(get_proc, "cuModuleGetFunction", 2000, &driver.get_function) ||
        !resolve(get_proc, "cuLibraryLoadData", 12000, &driver.load_library) ||
        !resolve(get_proc, "cuLibraryGetKernel", 12000, &driver.get_kernel) ||
        !resolve(get_proc, "cuLaunchKernel", 4000, &driver.launch) ||
        !resolve(get_proc, "cuCtxSynchronize", 2000, &driver.synchronize))
        return 2;
    CUmodule module;
    CUfunction kernel;
    CUlibrary library;
    CUkernel gemm;
    cudaKernel_t step;
    __cudaRegisterFunction(__cudaRegisterFatBinary(NULL), (const char *)step_stub, "_Z4stepv",
                           "_Z4stepv", -1, NULL, NULL, NULL, NULL, NULL);
    if (driver.init(0) != CUDA_SUCCESS || driver.load(&module, "image") != CUDA_SUCCESS ||
        driver.get_function(&kernel, module, "_Z6kernelPf") != CUDA_SUCCESS ||
        driver.load_library(&library, "image", NULL, NULL, 0, NULL, NULL, 0) != CUDA_SUCCESS ||
        driver.get_kernel(&gemm, library, "_Z4gemmv") != CUDA_SUCCESS ||
        __cudaGetKernel(&step, (const void *)step_stub) != cudaSuccess)
        return 3;
    /* the runtime fills its own table at its first call: before attach, too */
    if (cudaFree(NULL) != cudaSuccess)
        return 3;
    printf("started\n");
    fflush(stdout);
    for (;;) {
        void *by_runtime = NULL;
        CUdeviceptr by_driver = 0;
        uint64_t ns = 10000;
        void *args[] = {&ns};
        if (cudaMalloc(&by_runtime, 1 * MiB) != cudaSuccess || cudaFree(by_runtime) != cudaSuccess ||
            driver.alloc(&by_driver, 2 * MiB) != CUDA_SUCCESS ||
            driver.release(by_driver) != CUDA_SUCCESS ||
            driver.launch(kernel, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS ||
            driver.launch((CUfunction)gemm, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS ||
            __cudaLaunchKernel(step, (dim3){1, 1, 1}, (dim3){32, 1, 1}, args, 0, 0) != cudaSuccess ||
            driver.synchronize() != CUDA_SUCCESS)
            return 4;
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
}
