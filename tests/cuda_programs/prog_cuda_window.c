/*
 * prog_cuda_window: allocations on both sides of a capture window's
 * opening. The test opens the window when the program says "ready".
 *
 *   before       cudaMalloc 8 MiB (kept), cudaMalloc 1 MiB (freed),
 *                cuMemAlloc 4 MiB through the driver (kept),
 *                cudaMallocHost 1 MiB (kept)
 *   in window    cudaMalloc 2 MiB (kept), cudaFree of the 8 MiB
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#define MiB (1u << 20)

static int wait_for_line(void)
{
    char line[64];
    return fgets(line, sizeof(line), stdin) != NULL;
}

int main(void)
{
    void *kept = NULL, *freed = NULL, *host = NULL, *inside = NULL;
    CUdeviceptr driver = 0;
    if (cudaMalloc(&kept, 8 * MiB) != cudaSuccess || cudaMalloc(&freed, 1 * MiB) != cudaSuccess ||
        cudaFree(freed) != cudaSuccess || cuMemAlloc(&driver, 4 * MiB) != CUDA_SUCCESS ||
        cudaMallocHost(&host, 1 * MiB) != cudaSuccess)
        return 1;
    printf("ready\n");
    fflush(stdout);
    if (!wait_for_line())
        return 2;
    if (cudaMalloc(&inside, 2 * MiB) != cudaSuccess || cudaFree(kept) != cudaSuccess)
        return 3;
    printf("done\n");
    fflush(stdout);
    return wait_for_line() ? 0 : 4;
}
