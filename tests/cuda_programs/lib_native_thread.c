/*
 * lib_native_thread.c - a thread that Python never saw: started with
 * pthread_create from C, it has no Python thread state. Its allocation
 * must get native frames only, and no Python frames of any other thread.
 * Its launches, as autograd's engine threads make the backward pass's, come
 * from functions whose symbols are autograd nodes' apply methods.
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

/* @l's launches; inlined into each caller, so that the caller's frame is the launch's own
 * (a call to it in tail position would leave the caller off the stack) */
static inline __attribute__((always_inline)) int launch_all(const struct launches *l)
{
    cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t) =
        (cudaError_t(*)(const void *, dim3, dim3, void **, size_t, cudaStream_t))dlsym(
            RTLD_DEFAULT, "cudaLaunchKernel");
    uint64_t duration = l->duration_ns;
    void *args[1] = {&duration};
    dim3 one = {1, 1, 1};
    int failed = !launch_fn;
    for (int i = 0; i < l->count && !failed; i++)
        failed = launch_fn(l->stub, one, one, args, 0, NULL) != cudaSuccess;
    return failed;
}


/* Autograd nodes' apply methods, by their C++ symbols (demangled:
 * torch::autograd::generated::MmBackward0::apply(), torch::autograd::PyNode::apply()),
 * as the analyzer finds them on an engine thread's stack; exported, so that dladdr names
 * them too. */
#define NODE(function, symbol)                                                                     \
    int function(const struct launches *l) __asm__(symbol) __attribute__((noinline, used));       \
    int function(const struct launches *l)                                                         \
    {                                                                                              \
        return launch_all(l);                                                                      \
    }
NODE(mm_backward, "_ZN5torch8autograd9generated11MmBackward05applyEv")
NODE(addmm_backward, "_ZN5torch8autograd9generated14AddmmBackward05applyEv")
NODE(layer_norm_backward, "_ZN5torch8autograd9generated24NativeLayerNormBackward05applyEv")
NODE(py_node, "_ZN5torch8autograd6PyNode5applyEv")

/* The backward passes of the test's model: in each of @steps, each node's kernel launched
 * @count times, in this order, then @unnamed's kernels under no node (the fake GPU runs each
 * launch for its duration). */
struct backward_pass {
    struct launches mm, addmm, layer_norm, py_node, unnamed[2];
    int steps;
};

static void *run_backward(void *context)
{
    const struct backward_pass *p = context;
    int failed = 0;
    for (int step = 0; step < p->steps && !failed; step++)
        failed = mm_backward(&p->mm) || addmm_backward(&p->addmm) ||
                 layer_norm_backward(&p->layer_norm) || py_node(&p->py_node) ||
                 launch_all(&p->unnamed[0]) || launch_all(&p->unnamed[1]);
    return (void *)(intptr_t)failed;
}

/* @steps backward passes in one thread Python never saw (autograd's engine thread lives as
 * long as the process: one thread, so that a new thread's unsampled first launch does not
 * keep the first node's kernel out of the sample every step). */
int backward_in_native_thread(const struct backward_pass *pass)
{
    pthread_t thread;
    void *failed = (void *)1;
    if (pthread_create(&thread, NULL, run_backward, (void *)pass) != 0)
        return 1;
    pthread_join(thread, &failed);
    return failed != NULL;
}

