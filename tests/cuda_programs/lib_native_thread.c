/*
 * lib_native_thread.c - a thread that Python never saw: started with
 * pthread_create from C, it has no Python thread state. Its allocation
 * must get native frames only, and no Python frames of any other thread.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

static void *allocate(void *size)
{
    /* through the global scope, as the Python test's own calls go */
    cudaError_t (*malloc_fn)(void **, size_t) =
        (cudaError_t(*)(void **, size_t))dlsym(RTLD_DEFAULT, "cudaMalloc");
    void *pointer = NULL;
    return (void *)(intptr_t)(!malloc_fn || malloc_fn(&pointer, *(size_t *)size) != cudaSuccess);
}

int allocate_in_native_thread(size_t size)
{
    pthread_t thread;
    void *failed = (void *)1;
    if (pthread_create(&thread, NULL, allocate, &size) != 0)
        return 1;
    pthread_join(thread, &failed);
    return failed != NULL;
}

/* The kernel of host stub @stub launched @count times by a thread Python never saw, as
 * autograd's threads launch the backward pass: each runs @duration_ns on the fake GPU. */
struct launches {
    const void *stub;
    uint64_t duration_ns;
    int count;
};

static void *launch(void *context)
{
    const struct launches *l = context;
    cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t) =
        (cudaError_t(*)(const void *, dim3, dim3, void **, size_t, cudaStream_t))dlsym(
            RTLD_DEFAULT, "cudaLaunchKernel");
    uint64_t duration = l->duration_ns;
    void *args[1] = {&duration};
    dim3 one = {1, 1, 1};
    int failed = !launch_fn;
    for (int i = 0; i < l->count && !failed; i++)
        failed = launch_fn(l->stub, one, one, args, 0, NULL) != cudaSuccess;
    return (void *)(intptr_t)failed;
}

int launch_in_native_thread(const void *stub, uint64_t duration_ns, int count)
{
    struct launches l = {stub, duration_ns, count};
    pthread_t thread;
    void *failed = (void *)1;
    if (pthread_create(&thread, NULL, launch, &l) != 0)
        return 1;
    pthread_join(thread, &failed);
    return failed != NULL;
}
