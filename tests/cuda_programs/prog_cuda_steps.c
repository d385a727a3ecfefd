/*
 * prog_cuda_steps: 8 training steps marked as top-level NVTX ranges; each
 * launches two kernels of 3 ms on the default stream and synchronises, so
 * each step holds 6 ms of GPU work.
 */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
void step_stub(void) __asm__("_Z4stepv");
void step_stub(void) {}

int main(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)step_stub, "_Z4stepv", "_Z4stepv", -1, NULL, NULL,
                           NULL, NULL, NULL);
    uint64_t ns = 3000000;
    void *args[] = {&ns};
    dim3 one = {1, 1, 1};
    int failures = 0;
    for (int i = 0; i < 8; i++) {
        nvtxRangePushA("train_step");
        failures += cudaLaunchKernel((const void *)step_stub, one, one, args, 0, 0) != cudaSuccess;
        failures += cudaLaunchKernel((const void *)step_stub, one, one, args, 0, 0) != cudaSuccess;
        failures += cudaDeviceSynchronize() != cudaSuccess;
        nvtxRangePop();
    }
    printf(failures ? "failed\n" : "ok\n");
    return failures;
}
