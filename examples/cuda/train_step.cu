// train_step.cu - a small real CUDA program for machines with a GPU: the
// allocation, copy, launch and synchronisation pattern of a training step,
// with one deliberate leak and one pageable copy for the report to find.
//
//   LD_PRELOAD=libprofinject.so ./train_step [truths.json] && profinject-analyze profinject-traces/
//
// With a path it writes its own figures there, for tools/gpu-check: the
// launches of each kernel, the device bytes it allocated, and the GPU time
// of its "busy" kernels as each one reads it from the GPU's global timer.
// (Events recorded around each one measured 6 us a launch more on an H200:
// the GPU, idle after the previous synchronisation, records the first event
// before the launch reaches it.)
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

__device__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Spins for @cycles of the SM's clock: a kernel of a known, steady length,
// which adds the nanoseconds it ran to *@elapsed_ns.
__global__ void busy(long long cycles, unsigned long long *elapsed_ns)
{
    unsigned long long began = global_ns();
    long long start = clock64();
    while (clock64() - start < cycles)
        ;
    atomicAdd(elapsed_ns, global_ns() - began);
}

int main(int argc, char **argv)
{
    const int n = 1 << 22, steps = 50, scales = 20;
    const size_t leak_bytes = 64 << 20;
    std::vector<float> pageable(n, 1.0f);
    float *host_pinned, *x, *sum, *leak;
    unsigned long long *busy_ns;
    if (cudaMallocHost(&host_pinned, n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&x, n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&sum, sizeof(float)) != cudaSuccess ||
        cudaMalloc(&leak, leak_bytes) != cudaSuccess ||
        cudaMallocHost(&busy_ns, sizeof(*busy_ns)) != cudaSuccess) {
        std::printf("no usable GPU\n");
        return 1;
    }
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaEvent_t before, after;
    cudaEventCreate(&before);
    cudaEventCreate(&after);
    double busy_ms = 0;
    *busy_ns = 0;
    for (int step = 0; step < steps; step++) {
        cudaMemcpyAsync(x, host_pinned, n * sizeof(float), cudaMemcpyHostToDevice, stream);
        for (int k = 0; k < scales; k++)
            scale<<<(n + 255) / 256, 256, 0, stream>>>(x, n, 1.0001f);
        cudaMemsetAsync(sum, 0, sizeof(float), stream);
        reduce<float><<<1, 256, 0, stream>>>(x, sum, n);
        for (int k = 0; k < 2; k++) {
            cudaEventRecord(before, stream);
            busy<<<1, 1, 0, stream>>>(200000, busy_ns); // ~0.1 ms
            cudaEventRecord(after, stream);
            cudaEventSynchronize(after);
            float ms = 0;
            cudaEventElapsedTime(&ms, before, after);
            busy_ms += ms;
        }
        float result;
        cudaMemcpy(&result, sum, sizeof(float), cudaMemcpyDeviceToHost); // a sync every step
    }
    cudaMemcpy(x, pageable.data(), n * sizeof(float), cudaMemcpyHostToDevice); // pageable
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(sum);
    cudaFreeHost(host_pinned);
    unsigned long long busy_total_ns = *busy_ns;
    cudaFreeHost(busy_ns);
    if (argc > 1) {
        FILE *out = std::fopen(argv[1], "w");
        if (!out)
            return 1;
        std::fprintf(out,
                     "{\"launches\": {\"scale\": %d, \"reduce\": %d, \"busy\": %d},\n"
                     " \"device_peak_bytes\": %zu, \"device_live_at_end_bytes\": %zu,\n"
                     " \"busy_total_ns\": %llu, \"busy_between_events_ns\": %.0f}\n",
                     steps * scales, steps, steps * 2, n * sizeof(float) + sizeof(float) + leak_bytes,
                     leak_bytes, busy_total_ns, busy_ms * 1e6);
        std::fclose(out);
    }
    std::printf("done\n");
    return 0;
}
