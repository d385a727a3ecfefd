/*
 * prog_real_cudart: the toolkit's real libcudart.so.13 on a machine
 * without a GPU driver. Every call fails; the program must run on and
 * exit normally under the profiler.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>

static void stub(void) {}

int main(void)
{
    void *p = NULL;
    cudaError_t malloc_error = cudaMalloc(&p, 1 << 20);
    dim3 one = {1, 1, 1};
    cudaError_t launch_error = cudaLaunchKernel((const void *)stub, one, one, NULL, 0, 0);
    printf("cudaMalloc: %d, cudaLaunchKernel: %d\n", (int)malloc_error, (int)launch_error);
    return malloc_error == cudaSuccess; /* 0 expected: there is no driver */
}
