/*
 * prog_cupti_client: a program that is a CUPTI client itself, as one using
 * torch.profiler is. It launches 10 kernels of 1 ms ("_Z6beforev") and
 * synchronises; then it subscribes to CUPTI, registers its own buffer
 * callbacks, records concurrent kernels, launches 5 kernels of 2 ms
 * ("_Z5afterv"), synchronises, flushes and prints how many kernel records
 * and how much GPU time its own callbacks received, whether their
 * timestamps are CUPTI's default clock (CLOCK_REALTIME, within a second of
 * now) and the thread id type CUPTI's default: "client 5 10000000 realtime
 * default" when CUPTI served it as if it were alone.
 */
#include <cupti.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
void before_stub(void) __asm__("_Z6beforev");
void before_stub(void) {}
void after_stub(void) __asm__("_Z5afterv");
void after_stub(void) {}

static int kernels;
static uint64_t kernel_ns, last_end;

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 1 << 16;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI completed(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid)
{
    (void)context, (void)stream, (void)size;
    CUpti_Activity *record = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const void *)record;
            kernels++;
            kernel_ns += k->end - k->start;
            last_end = k->end;
        }
    free(buffer);
}

static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                 const void *info)
{
    (void)data, (void)domain, (void)id, (void)info;
}

static int launch(const void *stub, uint64_t ns)
{
    void *args[] = {&ns};
    dim3 one = {1, 1, 1};
    return cudaLaunchKernel(stub, one, one, args, 0, 0) != cudaSuccess;
}

int main(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, (const char *)before_stub, "_Z6beforev", "_Z6beforev", -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(module, (const char *)after_stub, "_Z5afterv", "_Z5afterv", -1, NULL,
                           NULL, NULL, NULL, NULL);
    int failures = cudaDeviceSynchronize() != cudaSuccess; /* the runtime and driver are up */
    for (int i = 0; i < 10; i++)
        failures += launch((const void *)before_stub, 1000000);
    failures += cudaDeviceSynchronize() != cudaSuccess;

    CUpti_SubscriberHandle subscriber;
    if (cuptiSubscribe(&subscriber, on_callback, NULL) != CUPTI_SUCCESS ||
        cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        printf("CUPTI refused this client\n");
        return 1;
    }
    for (int i = 0; i < 5; i++)
        failures += launch((const void *)after_stub, 2000000);
    failures += cudaDeviceSynchronize() != cudaSuccess;
    cuptiActivityFlushAll(0);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiUnsubscribe(subscriber);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t behind = (int64_t)((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec) -
                     (int64_t)last_end;
    CUpti_ActivityThreadIdType ids;
    cuptiGetThreadIdType(&ids);
    printf("client %d %llu %s %s\n", kernels, (unsigned long long)kernel_ns,
           behind >= 0 && behind < 1000000000 ? "realtime" : "another-clock",
           ids == CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT ? "default" : "changed");
    return failures;
}
