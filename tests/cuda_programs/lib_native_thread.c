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
