/*
 * prog_cuda_pool: stream-ordered allocations as PyTorch's
 * backend:cudaMallocAsync makes them, with the address handed back by the
 * pool at once and freed on another thread (as autograd's thread frees
 * what the forward allocated):
 *
 *   main     cudaMallocAsync 8 MiB, kept to the end
 *   3000 x   main allocates 1 MiB (cudaMallocAsync, its _ptsz flavour,
 *            cuMemAllocAsync or cudaMallocFromPoolAsync in turn) and hands
 *            it to a worker thread, which frees it (cudaFreeAsync, its
 *            _ptsz flavour, or cuMemFreeAsync) before main goes on
 *   end      the 8 MiB freed, the pool trimmed to nothing
 *
 * So at most 9 MiB is live, 3001 allocations and 3001 frees. It prints
 * the pool's own figures, read through the runtime: "high H end E" with H
 * its ReservedMemHigh before the trim and E its ReservedMemCurrent after.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define MiB (1u << 20)
#define ROUNDS 3000

cudaError_t cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
cudaError_t cudaFreeAsync_ptsz(void *, cudaStream_t);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static void *handed;
static int round_done = -1, failures;

static void *worker(void *unused)
{
    (void)unused;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        while (!handed)
            pthread_cond_wait(&changed, &lock);
        void *p = handed;
        handed = NULL;
        pthread_mutex_unlock(&lock);
        int r = i % 3 == 0   ? cudaFreeAsync(p, 0) != cudaSuccess
                : i % 3 == 1 ? cudaFreeAsync_ptsz(p, 0) != cudaSuccess
                             : cuMemFreeAsync((CUdeviceptr)p, NULL) != CUDA_SUCCESS;
        pthread_mutex_lock(&lock);
        failures += r;
        round_done = i;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static int allocate(int i, cudaMemPool_t pool, void **p)
{
    switch (i % 4) {
    case 0:
        return cudaMallocAsync(p, 1 * MiB, 0) != cudaSuccess;
    case 1:
        return cudaMallocAsync_ptsz(p, 1 * MiB, 0) != cudaSuccess;
    case 2:
        return cuMemAllocAsync((CUdeviceptr *)p, 1 * MiB, NULL) != CUDA_SUCCESS;
    default:
        return cudaMallocFromPoolAsync(p, 1 * MiB, pool, 0) != cudaSuccess;
    }
}

int main(void)
{
    void *kept = NULL;
    cudaMemPool_t pool;
    if (cudaMallocAsync(&kept, 8 * MiB, 0) != cudaSuccess ||
        cudaDeviceGetMemPool(&pool, 0) != cudaSuccess)
        return 1;
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        void *p = NULL;
        if (allocate(i, pool, &p))
            return 2;
        pthread_mutex_lock(&lock);
        handed = p;
        pthread_cond_broadcast(&changed);
        while (round_done < i)
            pthread_cond_wait(&changed, &lock);
        pthread_mutex_unlock(&lock);
    }
    pthread_join(thread, NULL);
    cuuint64_t high = 0, end = 0;
    failures += cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &high) != cudaSuccess;
    failures += cudaFreeAsync(kept, 0) != cudaSuccess;
    failures += cudaStreamSynchronize(0) != cudaSuccess;
    failures += cudaMemPoolTrimTo(pool, 0) != cudaSuccess;
    failures += cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &end) != cudaSuccess;
    printf("high %llu end %llu\n", (unsigned long long)high, (unsigned long long)end);
    return failures;
}
