/*
 * prog_cuda_leak: a training loop that leaks. 60 steps, each reading its
 * loss back (a 4-byte device-to-host copy, as loss.item() does); step 1
 * reserves 64 MiB it keeps (as a caching allocator does), every step
 * allocates and frees 8 MiB of activations, and from step 11 on each step
 * keeps 4 MiB more in keep_activation(). Truths: 60 steps, growth of
 * 4 MiB per step from step 11, kept at keep_activation. With the argument
 * "isnan-isinf" each step computes for 5 ms and then also reads two 1-byte
 * flags back right after the loss, as Hugging Face's Trainer tests the
 * loss: still 60 steps.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MiB (1u << 20)
#define STEPS 60
#define LEAK_FROM 11

__attribute__((noinline)) void *keep_activation(void)
{
    void *kept = NULL;
    return cudaMalloc(&kept, 4 * MiB) == cudaSuccess ? kept : NULL;
}

int main(int argc, char **argv)
{
    int flags = argc > 1 && strcmp(argv[1], "isnan-isinf") == 0;
    void *reserve = NULL, *loss = NULL;
    int failures = cudaMalloc(&loss, 4) != cudaSuccess;
    for (int step = 1; step <= STEPS; step++) {
        if (step == 1)
            failures += cudaMalloc(&reserve, 64 * MiB) != cudaSuccess;
        void *activations = NULL;
        failures += cudaMalloc(&activations, 8 * MiB) != cudaSuccess;
        if (step >= LEAK_FROM)
            failures += keep_activation() == NULL;
        failures += cudaFree(activations) != cudaSuccess;
        if (flags) {
            struct timespec compute = {0, 5000000};
            nanosleep(&compute, NULL);
        }
        float value = 0;
        failures += cudaMemcpy(&value, loss, sizeof(value), cudaMemcpyDeviceToHost) != cudaSuccess;
        for (int i = 0; flags && i < 2; i++) {
            char flag = 0;
            failures += cudaMemcpy(&flag, loss, 1, cudaMemcpyDeviceToHost) != cudaSuccess;
        }
    }
    printf(failures ? "failed\n" : "ok\n");
    return failures;
}
