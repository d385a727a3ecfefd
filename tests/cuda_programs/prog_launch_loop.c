/*
 * prog_launch_loop N [cupti|handle]: N launches of a kernel that takes no
 * GPU time, as fast as possible; prints the median ns per launch of 9
 * rounds. tools/bench runs it with and without the profiler. The launches
 * are cudaLaunchKernel with the host stub; with "handle" they are what
 * nvcc 13's <<<>>> and libtorch_cuda make: the handle fetched once with
 * __cudaGetKernel, then __cudaLaunchKernel with it. With "cupti" the
 * program is itself a CUPTI activity client asking for what profinject's
 * CUPTI session asks for (kernel records, API records of cudaLaunchKernel),
 * so that a run under the profiler in CUPTI mode differs from it by what
 * the profiler adds alone.
 */
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
cudaError_t __cudaGetKernel(cudaKernel_t *, const void *);
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
void empty_stub(void) __asm__("_Z5emptyv");
void empty_stub(void) {}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 1 << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI completed(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid)
{
    (void)context, (void)stream, (void)size;
    CUpti_Activity *record = NULL;
    while (next_record(buffer, valid, &record) == CUPTI_SUCCESS)
        ; /* read, as a client reads them */
    free(buffer);
}

static int be_cupti_client(void)
{
    void *lib = dlopen("libcupti.so.13", RTLD_NOW);
    if (!lib)
        return -1;
    CUptiResult (*callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) =
        (CUptiResult(*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))dlsym(
            lib, "cuptiActivityRegisterCallbacks");
    CUptiResult (*enable)(CUpti_ActivityKind) =
        (CUptiResult(*)(CUpti_ActivityKind))dlsym(lib, "cuptiActivityEnable");
    CUptiResult (*runtime_api)(CUpti_CallbackId, uint8_t) =
        (CUptiResult(*)(CUpti_CallbackId, uint8_t))dlsym(lib, "cuptiActivityEnableRuntimeApi");
    next_record = (CUptiResult(*)(uint8_t *, size_t, CUpti_Activity **))dlsym(
        lib, "cuptiActivityGetNextRecord");
    if (!callbacks || !enable || !runtime_api || !next_record ||
        callbacks(requested, completed) != CUPTI_SUCCESS ||
        enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
        runtime_api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1) != CUPTI_SUCCESS)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    if (argc > 2 && strcmp(argv[2], "cupti") == 0 &&
        (cudaDeviceSynchronize() != cudaSuccess || be_cupti_client() != 0)) {
        fprintf(stderr, "prog_launch_loop: no CUPTI to be a client of\n");
        return 1;
    }
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)empty_stub, "_Z5emptyv", "_Z5emptyv", -1, NULL,
                           NULL, NULL, NULL, NULL);
    uint64_t zero = 0;
    void *args[] = {&zero};
    dim3 one = {1, 1, 1};
    cudaKernel_t handle = NULL;
    if (argc > 2 && strcmp(argv[2], "handle") == 0 &&
        (__cudaGetKernel(&handle, (const void *)empty_stub) != cudaSuccess || !handle)) {
        fprintf(stderr, "prog_launch_loop: no kernel handle for the stub\n");
        return 1;
    }
    double rounds[9];
    for (int r = 0; r < 9; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (handle)
            for (long i = 0; i < n; i++)
                __cudaLaunchKernel(handle, one, one, args, 0, 0);
        else
            for (long i = 0; i < n; i++)
                cudaLaunchKernel((const void *)empty_stub, one, one, args, 0, 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        rounds[r] = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n;
    }
    qsort(rounds, 9, sizeof(double), compare);
    printf("%.2f\n", rounds[4]);
    return 0;
}
