/*
 * prog_cuda_nvcc13: kernels launched exactly as nvcc 13 compiles <<<>>>
 * (crt/host_runtime.h, crt/device_functions.h; `nvcc -cuda` shows it):
 * the launch site pushes the configuration and calls the host stub; the
 * stub fetches its kernel's handle once with __cudaGetKernel, pops the
 * configuration and calls __cudaLaunchKernel with the handle (the _ptsz
 * flavour when built with --default-stream per-thread).
 *
 *   busy(ns)  "_Z4busyy"  30 x 2 ms, default stream (__cudaLaunchKernel)
 *   tick(ns)  "_Z4ticky"  20 x 1 ms, default stream; 5 x 1 ms per-thread
 *                         stream (__cudaLaunchKernel_ptsz)
 *
 * Only busy's stub is exported (the build says so), so tick is named by
 * the driver from its handle, busy from its stub.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *stub);
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);

static int failures;

/* The body nvcc gives a host stub, flavour chosen as __cudaLaunchKernel_helper does. */
#define STUB_BODY(stub, launch, ...)                                                              \
    void *args[] = {__VA_ARGS__};                                                                 \
    static cudaKernel_t handle;                                                                   \
    static int fetched; /* nvcc: a function-local static initialised once */                      \
    if (!fetched)                                                                                 \
        fetched = 1 + (__cudaGetKernel(&handle, (const void *)stub) == cudaSuccess);              \
    dim3 grid, block;                                                                             \
    size_t shared;                                                                                \
    cudaStream_t stream;                                                                          \
    if (__cudaPopCallConfiguration(&grid, &block, &shared, &stream) != cudaSuccess)               \
        return;                                                                                   \
    failures += launch(handle, grid, block, args, shared, stream) != cudaSuccess;

void busy(unsigned long long ns) __asm__("_Z4busyy");
void busy(unsigned long long ns)
{
    STUB_BODY(busy, __cudaLaunchKernel, &ns)
}

void tick(unsigned long long ns) __asm__("_Z4ticky");
void tick(unsigned long long ns)
{
    STUB_BODY(tick, __cudaLaunchKernel, &ns)
}

/* the same kernel from a translation unit built with --default-stream per-thread */
static void tick_ptsz(unsigned long long ns)
{
    STUB_BODY(tick, __cudaLaunchKernel_ptsz, &ns)
}

/* nvcc's registration code, run before main */
__attribute__((constructor)) static void register_kernels(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)busy, "_Z4busyy", "_Z4busyy", -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFunction(module, (const char *)tick, "_Z4ticky", "_Z4ticky", -1, NULL, NULL,
                           NULL, NULL, NULL);
}

int main(void)
{
    dim3 one = {1, 1, 1}, warp = {32, 1, 1};
    for (int i = 0; i < 30; i++) /* busy<<<1, 32>>>(2000000) */
        __cudaPushCallConfiguration(one, warp, 0, NULL) ? (void)0 : busy(2000000);
    for (int i = 0; i < 20; i++) /* tick<<<1, 32>>>(1000000) */
        __cudaPushCallConfiguration(one, warp, 0, NULL) ? (void)0 : tick(1000000);
    for (int i = 0; i < 5; i++)
        __cudaPushCallConfiguration(one, warp, 0, NULL) ? (void)0 : tick_ptsz(1000000);
    failures += cudaDeviceSynchronize() != cudaSuccess;
    printf(failures ? "failed\n" : "ok\n");
    return failures;
}
