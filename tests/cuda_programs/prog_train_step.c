/*
 * prog_train_step: examples/cuda/train_step.cu's pattern against the test
 * double, launched as nvcc 13 compiles <<<>>>, so that tools/gpu-check's
 * comparisons can be tried here: 50 steps of a 16 MiB host-to-device copy,
 * 20 "scale" kernels, a set, a "reduce", two 100 us "busy" kernels and a
 * synchronous copy back; a 64 MiB allocation never freed. The fake device
 * runs each kernel for the nanoseconds of its first parameter.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *stub);
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);

void scale(void) __asm__("_Z5scalePfif");
void scale(void) {}
void reduce(void) __asm__("_Z6reduceIfEvPKT_PS0_i");
void reduce(void) {}
void busy(void) __asm__("_Z4busyx");
void busy(void) {}

static int failures;

static void launch(void (*stub)(void), uint64_t ns, cudaStream_t stream)
{
    cudaKernel_t kernel;
    void *args[] = {&ns};
    dim3 one = {1, 1, 1};
    failures += __cudaGetKernel(&kernel, (const void *)stub) != cudaSuccess ||
                __cudaLaunchKernel(kernel, one, one, args, 0, stream) != cudaSuccess;
}

int main(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)scale, "_Z5scalePfif", "_Z5scalePfif", -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(module, (const char *)reduce, "_Z6reduceIfEvPKT_PS0_i",
                           "_Z6reduceIfEvPKT_PS0_i", -1, NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(module, (const char *)busy, "_Z4busyx", "_Z4busyx", -1, NULL, NULL,
                           NULL, NULL, NULL);
    const size_t n = 1 << 22;
    float *pinned, *x, *sum, *leak;
    if (cudaMallocHost((void **)&pinned, n * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&x, n * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&sum, sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&leak, 64 << 20) != cudaSuccess)
        return 1;
    cudaStream_t stream;
    failures += cudaStreamCreate(&stream) != cudaSuccess;
    for (int step = 0; step < 50; step++) {
        failures += cudaMemcpyAsync(x, pinned, n * sizeof(float), cudaMemcpyHostToDevice, stream) !=
                    cudaSuccess;
        for (int k = 0; k < 20; k++)
            launch(scale, 1000, stream);
        failures += cudaMemsetAsync(sum, 0, sizeof(float), stream) != cudaSuccess;
        launch(reduce, 1000, stream);
        for (int k = 0; k < 2; k++)
            launch(busy, 100000, stream);
        float result;
        failures += cudaMemcpy(&result, sum, sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess;
    }
    failures += cudaDeviceSynchronize() != cudaSuccess;
    failures += cudaFree(x) != cudaSuccess;
    failures += cudaFree(sum) != cudaSuccess;
    failures += cudaFreeHost(pinned) != cudaSuccess;
    printf(failures ? "failed\n" : "done\n");
    return failures;
}
