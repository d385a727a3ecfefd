/*
 * prog_cuda_entries: the entries PyTorch's wheels import beyond the common
 * ones, against the test double. Sizes, counts and durations are fixed here.
 *
 *   device count   cudaGetDeviceCount twice: 1 device (without one the
 *                  program says so and stops there)
 *   copies         cudaMemcpyToSymbol 64 KiB HtoD, cudaMemcpyToSymbol_ptds
 *                  32 KiB HtoD, cudaMemcpyPeerAsync 512 KiB twice
 *   kernels        coop(unsigned long long) "_Z4coopy": cudaLaunchCooperativeKernel
 *                  3 x 2 ms and _ptsz 1 x 2 ms; grid(unsigned long long)
 *                  "_Z4gridy": cuLaunchCooperativeKernel, fetched as PyTorch
 *                  fetches driver entries (cudaGetDriverEntryPointByVersion),
 *                  3 x 1 ms
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *, dim3, dim3, void **, size_t,
                                             cudaStream_t);
cudaError_t cudaMemcpyToSymbol_ptds(const void *, const void *, size_t, size_t,
                                    enum cudaMemcpyKind);
void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);

void coop_stub(void) __asm__("_Z4coopy");
void coop_stub(void) {}

__attribute__((constructor)) static void register_kernels(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)coop_stub, "_Z4coopy", "_Z4coopy", -1, NULL,
                           NULL, NULL, NULL, NULL);
}

static void *driver_entry(const char *name, int version)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult status;
    if (cudaGetDriverEntryPointByVersion(name, &fn, (unsigned)version, cudaEnableDefault,
                                         &status) != cudaSuccess)
        return NULL;
    return fn;
}

int main(void)
{
    int count = -1;
    cudaError_t first = cudaGetDeviceCount(&count), again = cudaGetDeviceCount(&count);
    if (first != cudaSuccess) {
        printf("no device: %d %d\n", (int)first, (int)again);
        return 0;
    }
    int failures = count != 1;
    static char host[1 << 20];
    memset(host, 7, sizeof(host));
    void *symbol, *a, *b;
    failures += cudaMalloc(&symbol, 64 << 10) != cudaSuccess;
    failures += cudaMalloc(&a, 1 << 20) != cudaSuccess;
    failures += cudaMalloc(&b, 1 << 20) != cudaSuccess;
    failures += cudaMemcpyToSymbol(symbol, host, 64 << 10, 0, cudaMemcpyHostToDevice) != cudaSuccess;
    failures += cudaMemcpyToSymbol_ptds(symbol, host, 32 << 10, 0, cudaMemcpyHostToDevice) !=
                cudaSuccess;
    for (int i = 0; i < 2; i++)
        failures += cudaMemcpyPeerAsync(b, 0, a, 0, 512 << 10, 0) != cudaSuccess;

    uint64_t ns = 2000000;
    void *args[] = {&ns};
    dim3 grid = {4, 1, 1}, block = {32, 1, 1};
    for (int i = 0; i < 3; i++)
        failures += cudaLaunchCooperativeKernel((const void *)coop_stub, grid, block, args, 0, 0) !=
                    cudaSuccess;
    failures += cudaLaunchCooperativeKernel_ptsz((const void *)coop_stub, grid, block, args, 0,
                                                 0) != cudaSuccess;

    CUresult (*load)(CUmodule *, const void *) = driver_entry("cuModuleLoadData", 2000);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *) =
        driver_entry("cuModuleGetFunction", 2000);
    CUresult (*cooperative)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **) =
        driver_entry("cuLaunchCooperativeKernel", 12000);
    CUmodule module;
    CUfunction kernel;
    if (!load || !get_function || !cooperative || load(&module, "image") != CUDA_SUCCESS ||
        get_function(&kernel, module, "_Z4gridy") != CUDA_SUCCESS)
        return 3;
    ns = 1000000;
    for (int i = 0; i < 3; i++)
        failures += cooperative(kernel, 4, 1, 1, 32, 1, 1, 0, NULL, args) != CUDA_SUCCESS;
    failures += cudaDeviceSynchronize() != cudaSuccess;
    failures += cudaFree(a) != cudaSuccess;
    failures += cudaFree(b) != cudaSuccess;
    failures += cudaFree(symbol) != cudaSuccess;
    printf(failures ? "failed: %d\n" : "ok\n", failures);
    return failures != 0;
}
