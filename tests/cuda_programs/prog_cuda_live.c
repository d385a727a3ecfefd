/*
 * prog_cuda_live: a GPU loop for `profinject top`, on the stand-in device.
 * Each step (a top-level NVTX range) launches one kernel of 6 ms,
 * synchronises, then computes on the host for 4 ms: the GPU is busy 60% of
 * the time and the host waits for it as long. Runs for the seconds given,
 * printing "ready PID" first and, at the end, its own account: "steps N
 * seconds S sync_ns W" (W: its time in cudaDeviceSynchronize by its clock).
 */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
void step_stub(void) __asm__("_Z4stepv");
void step_stub(void) {}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5;
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)step_stub, "_Z4stepv", "_Z4stepv", -1, NULL, NULL,
                           NULL, NULL, NULL);
    uint64_t kernel_ns = 6000000;
    void *args[] = {&kernel_ns};
    dim3 one = {1, 1, 1};
    printf("ready %d\n", getpid());
    fflush(stdout);
    uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9), synced = 0, steps = 0;
    int failures = 0;
    while (now_ns() < end) {
        nvtxRangePushA("train_step");
        failures += cudaLaunchKernel((const void *)step_stub, one, one, args, 0, 0) != cudaSuccess;
        uint64_t before = now_ns();
        failures += cudaDeviceSynchronize() != cudaSuccess;
        synced += now_ns() - before;
        for (uint64_t until = now_ns() + 4000000; now_ns() < until;)
            ;
        nvtxRangePop();
        steps++;
    }
    printf("steps %llu seconds %.6f sync_ns %llu\n", (unsigned long long)steps,
           (double)(now_ns() - start) / 1e9, (unsigned long long)synced);
    return failures != 0;
}
