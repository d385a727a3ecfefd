// train_step.cu - a small real CUDA program for machines with a GPU: the
// allocation, copy, launch and synchronisation pattern of a training step,
// with one deliberate leak and one pageable copy for the report to find.
//
//   LD_PRELOAD=libprofinject.so ./train_step && profinject-analyze profinject-traces/
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

__global__ void scale(float *x, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}

template <typename T> __global__ void reduce(const T *x, T *out, int n)
{
    T sum = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sum += x[i];
    atomicAdd(out, sum);
}

int main()
{
    const int n = 1 << 22;
    std::vector<float> pageable(n, 1.0f);
    float *host_pinned, *x, *sum, *leak;
    if (cudaMallocHost(&host_pinned, n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&x, n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&sum, sizeof(float)) != cudaSuccess ||
        cudaMalloc(&leak, 64 << 20) != cudaSuccess) {
        std::printf("no usable GPU\n");
        return 1;
    }
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    for (int step = 0; step < 50; step++) {
        cudaMemcpyAsync(x, host_pinned, n * sizeof(float), cudaMemcpyHostToDevice, stream);
        for (int k = 0; k < 20; k++)
            scale<<<(n + 255) / 256, 256, 0, stream>>>(x, n, 1.0001f);
        cudaMemsetAsync(sum, 0, sizeof(float), stream);
        reduce<float><<<1, 256, 0, stream>>>(x, sum, n);
        float result;
        cudaMemcpy(&result, sum, sizeof(float), cudaMemcpyDeviceToHost); // a sync every step
    }
    cudaMemcpy(x, pageable.data(), n * sizeof(float), cudaMemcpyHostToDevice); // pageable
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(sum);
    cudaFreeHost(host_pinned);
    std::printf("done\n");
    return 0;
}
