/*
 * prog_cuda_runtime: a CUDA program as nvcc would build it, against the
 * test double. Every size, count and kernel duration is fixed here; the
 * tests compare the trace with them.
 *
 *   allocations  cudaMalloc 1, 2 and 4 MiB; the 1 and 2 MiB are freed, the
 *                4 MiB one leaks; cudaMallocHost 1 MiB, freed
 *   copies       HtoD 256 KiB pageable, HtoD 256 KiB pinned, DtoH 128 KiB
 *                pageable, DtoD 64 KiB, memset 32 KiB
 *   kernels      scale(float*, int): 20 x 2 ms; reduce<float>(float const*, float*): 10 x 5 ms,
 *                both on the default stream; one per-thread-stream launch
 *                of scale (1 ms); two threads, each 10 x 1 ms of scale on
 *                its own stream
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

cudaError_t cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);

/* Host stubs carry the kernels' mangled names, as nvcc's do. */
void scale_stub(void) __asm__("_Z5scalePfi");
void scale_stub(void) {}
void reduce_stub(void) __asm__("_Z6reduceIfEvPKfPf");
void reduce_stub(void) {}

__attribute__((constructor)) static void register_kernels(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)scale_stub, "_Z5scalePfi", "_Z5scalePfi", -1,
                           NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(module, (const char *)reduce_stub, "_Z6reduceIfEvPKfPf",
                           "_Z6reduceIfEvPKfPf", -1, NULL, NULL, NULL, NULL, NULL);
}

static int launch(const void *stub, uint64_t ns, cudaStream_t stream)
{
    void *args[] = {&ns};
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    return cudaLaunchKernel(stub, grid, block, args, 0, stream) != cudaSuccess;
}

static void *stream_worker(void *arg)
{
    (void)arg;
    cudaStream_t stream;
    int failures = cudaStreamCreate(&stream) != cudaSuccess;
    for (int i = 0; i < 10; i++)
        failures += launch((const void *)scale_stub, 1000000, stream);
    failures += cudaStreamSynchronize(stream) != cudaSuccess;
    return (void *)(intptr_t)failures;
}

int main(void)
{
    int failures = 0;
    void *a, *b, *c, *pinned;
    failures += cudaMalloc(&a, 1 << 20) != cudaSuccess;
    failures += cudaMalloc(&b, 2 << 20) != cudaSuccess;
    failures += cudaMalloc(&c, 4 << 20) != cudaSuccess;
    failures += cudaMallocHost(&pinned, 1 << 20) != cudaSuccess;
    char *pageable = calloc(1, 256 << 10);

    failures += cudaMemcpy(a, pageable, 256 << 10, cudaMemcpyHostToDevice) != cudaSuccess;
    failures += cudaMemcpy(a, pinned, 256 << 10, cudaMemcpyHostToDevice) != cudaSuccess;
    failures += cudaMemcpy(pageable, b, 128 << 10, cudaMemcpyDeviceToHost) != cudaSuccess;
    failures += cudaMemcpy(b, a, 64 << 10, cudaMemcpyDeviceToDevice) != cudaSuccess;
    failures += cudaMemset(c, 0, 32 << 10) != cudaSuccess;

    for (int i = 0; i < 20; i++)
        failures += launch((const void *)scale_stub, 2000000, 0);
    for (int i = 0; i < 10; i++)
        failures += launch((const void *)reduce_stub, 5000000, 0);
    uint64_t ns = 1000000;
    void *args[] = {&ns};
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    failures += cudaLaunchKernel_ptsz((const void *)scale_stub, grid, block, args, 0, 0) != 0;
    failures += cudaDeviceSynchronize() != cudaSuccess;

    pthread_t threads[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&threads[t], NULL, stream_worker, NULL);
    for (int t = 0; t < 2; t++) {
        void *result;
        pthread_join(threads[t], &result);
        failures += (int)(intptr_t)result;
    }

    failures += cudaFree(a) != cudaSuccess;
    failures += cudaFree(b) != cudaSuccess;
    failures += cudaFreeHost(pinned) != cudaSuccess;
    free(pageable);
    printf(failures ? "failed\n" : "ok\n");
    return failures;
}
