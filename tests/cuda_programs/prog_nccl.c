/*
 * prog_nccl: every NCCL entry the profiler hooks, against the fake
 * libnccl.so.2 (tests/fake_nccl), with counts, datatypes, reductions and
 * peers fixed here. At the end it prints what it did as JSON (one object:
 * its calls with their kernel's duration by the fake device's rule, its
 * communicators with the unique-id hash computed here, the kernel it
 * launched outside NCCL), the truth the test holds the report to.
 *
 * Communicators: InitRank (rank 1 of 4), InitRankConfig (0 of 2),
 * InitRankScalable (3 of 8, two ids), InitAll of 2, a split of the first,
 * and an InitRank that fails (rank 5 of 2). Calls: on the first, unless
 * said: three all-reduces, one all-reduce through a pointer from dlsym, a
 * broadcast, a bcast, a reduce, an all-gather, a reduce-scatter, an
 * all-to-all, a group of a send and a receive, an all-reduce on each
 * InitAll communicator, and an all-reduce without a communicator that
 * fails. Then a kernel named as NCCL's launched directly, as a PyTorch
 * linking NCCL statically would.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../fake_nccl/fake_nccl.h"

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);
static const char static_stub;
#define STATIC_KERNEL "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
#define STATIC_KERNEL_NS 50000ull
/* Launched first, so that every collective's kernel queues behind device
 * work: an event pair's start on an idle stream is the host's time of the
 * event, and whatever delays the host before the launch (a preemption on a
 * loaded machine) would count as the kernel's; on a busy stream both events
 * take the device's times, which the fake device's rule gives exactly. */
static const char queue_stub;
#define QUEUE_KERNEL "queue_ahead_of_the_collectives"
#define QUEUE_KERNEL_NS 20000000ull

static size_t type_size(ncclDataType_t t)
{
    static const size_t sizes[ncclNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return sizes[t];
}

static uint64_t fnv1a(uint64_t hash, const void *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++)
        hash = (hash ^ ((const unsigned char *)bytes)[i]) * 0x100000001b3ull;
    return hash;
}
#define FNV_START 0xcbf29ce484222325ull

static char calls[8192], comms[4096];
static int failures, ncalls, ncomms;

/* One call as the truth has it: @ns its kernel's duration (for a grouped one: its own part
 * of the group's kernel, which runs the sum). */
static void call(const char *func, ncclResult_t r, int expect_ok, size_t count,
                 ncclDataType_t t, int nranks, int grouped)
{
    failures += (r == ncclSuccess) != expect_ok;
    unsigned long long ns = r == ncclSuccess ? FAKE_NCCL_KERNEL_NS(count * type_size(t)) : 0;
    size_t used = strlen(calls);
    snprintf(calls + used, sizeof(calls) - used,
             "%s{\"func\": \"%s\", \"count\": %zu, \"datatype\": %d, \"type_size\": %zu, "
             "\"nranks\": %d, \"grouped\": %d, \"failed\": %d, \"kernel_ns\": %llu}",
             ncalls++ ? ", " : "", func, count, (int)t, type_size(t), nranks, grouped,
             r != ncclSuccess, ns);
}

static void comm(const char *op, ncclResult_t r, int expect_ok, uint64_t hash, int rank,
                 int nranks)
{
    failures += (r == ncclSuccess) != expect_ok;
    size_t used = strlen(comms);
    snprintf(comms + used, sizeof(comms) - used,
             "%s{\"op\": \"%s\", \"hash\": \"%016llx\", \"rank\": %d, \"nranks\": %d, "
             "\"failed\": %d}",
             ncomms++ ? ", " : "", op, (unsigned long long)hash, rank, nranks, r != ncclSuccess);
}

int main(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(module, &static_stub, STATIC_KERNEL, STATIC_KERNEL, -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFunction(module, &queue_stub, QUEUE_KERNEL, QUEUE_KERNEL, -1, NULL, NULL, NULL,
                           NULL, NULL);
    cudaStream_t stream;
    if (cudaStreamCreate(&stream) != cudaSuccess)
        return 1;
    int version = 0;
    failures += ncclGetVersion(&version) != ncclSuccess || version != NCCL_VERSION_CODE;

    ncclUniqueId id, id2, ids[2];
    ncclGetUniqueId(&id);
    ncclGetUniqueId(&id2);
    ncclGetUniqueId(&ids[0]);
    ncclGetUniqueId(&ids[1]);
    ncclComm_t c4, c2, c8, all[2], split, bad;
    uint64_t h4 = fnv1a(FNV_START, &id, sizeof(id));
    comm("init_rank", ncclCommInitRank(&c4, 4, id, 1), 1, h4, 1, 4);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    comm("init_config", ncclCommInitRankConfig(&c2, 2, id2, 0, &config), 1,
         fnv1a(FNV_START, &id2, sizeof(id2)), 0, 2);
    comm("init_scalable", ncclCommInitRankScalable(&c8, 8, 3, 2, ids, NULL), 1,
         fnv1a(FNV_START, ids, sizeof(ids)), 3, 8);
    ncclResult_t r = ncclCommInitAll(all, 2, NULL);
    uint64_t hall = fnv1a(fnv1a(FNV_START, &all[0], sizeof(all[0])), &(int){2}, sizeof(int));
    comm("init_all", r, 1, hall, 0, 2);
    comm("init_all", r, 1, hall, 1, 2);
    int color_key[2] = {0, 5};
    uint64_t hsplit = fnv1a(fnv1a(FNV_START, &h4, sizeof(h4)), color_key, sizeof(color_key));
    comm("split", ncclCommSplit(c4, color_key[0], color_key[1], &split, NULL), 1, hsplit, 1, 4);
    comm("init_rank", ncclCommInitRank(&bad, 2, id, 5), 0, 0, 5, 2);

    unsigned long long queue_ns = QUEUE_KERNEL_NS;
    void *queue_args[] = {&queue_ns};
    dim3 single = {1, 1, 1};
    failures += cudaLaunchKernel(&queue_stub, single, single, queue_args, 0, stream) != cudaSuccess;
    for (int i = 0; i < 3; i++)
        call("all_reduce", ncclAllReduce(NULL, NULL, 1 << 20, ncclFloat32, ncclSum, c4, stream),
             1, 1 << 20, ncclFloat32, 4, 0);
    void *nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    __typeof__(ncclAllReduce) *by_dlsym = nccl ? dlsym(nccl, "ncclAllReduce") : NULL;
    failures += !by_dlsym;
    if (by_dlsym)
        call("all_reduce", by_dlsym(NULL, NULL, 1000, ncclFloat16, ncclMax, c4, stream), 1, 1000,
             ncclFloat16, 4, 0);
    call("broadcast", ncclBroadcast(NULL, NULL, 4096, ncclInt32, 2, c4, stream), 1, 4096,
         ncclInt32, 4, 0);
    call("broadcast", ncclBcast(NULL, 100, ncclUint8, 0, c4, stream), 1, 100, ncclUint8, 4, 0);
    call("reduce", ncclReduce(NULL, NULL, 2048, ncclFloat64, ncclMin, 3, c4, stream), 1, 2048,
         ncclFloat64, 4, 0);
    call("all_gather", ncclAllGather(NULL, NULL, 65536, ncclBfloat16, c4, stream), 1, 65536,
         ncclBfloat16, 4, 0);
    call("reduce_scatter", ncclReduceScatter(NULL, NULL, 16384, ncclFloat32, ncclSum, c4, stream),
         1, 16384, ncclFloat32, 4, 0);
    call("all_to_all", ncclAlltoAll(NULL, NULL, 512, ncclInt64, c4, stream), 1, 512, ncclInt64,
         4, 0);
    failures += ncclGroupStart() != ncclSuccess;
    call("send", ncclSend(NULL, 300, ncclFloat32, 2, c4, stream), 1, 300, ncclFloat32, 4, 1);
    call("recv", ncclRecv(NULL, 300, ncclFloat32, 3, c4, stream), 1, 300, ncclFloat32, 4, 1);
    failures += ncclGroupEnd() != ncclSuccess;
    for (int i = 0; i < 2; i++)
        call("all_reduce", ncclAllReduce(NULL, NULL, 2048, ncclFloat32, ncclSum, all[i], stream),
             1, 2048, ncclFloat32, 2, 0);
    call("all_reduce", ncclAllReduce(NULL, NULL, 64, ncclFloat32, ncclSum, NULL, stream), 0, 64,
         ncclFloat32, 0, 0);

    unsigned long long ns = STATIC_KERNEL_NS;
    void *args[] = {&ns};
    dim3 one = {1, 1, 1};
    failures += cudaLaunchKernel(&static_stub, one, one, args, 0, stream) != cudaSuccess;
    failures += cudaDeviceSynchronize() != cudaSuccess;

    failures += ncclCommFinalize(c4) != ncclSuccess;
    failures += ncclCommDestroy(c4) != ncclSuccess;
    failures += ncclCommDestroy(c2) != ncclSuccess || ncclCommDestroy(c8) != ncclSuccess;
    failures += ncclCommDestroy(all[0]) != ncclSuccess || ncclCommDestroy(all[1]) != ncclSuccess;
    failures += ncclCommAbort(split) != ncclSuccess;
    printf("{\"failures\": %d, \"calls\": [%s], \"comms\": [%s], \"static_kernel\": "
           "{\"name\": \"%s\", \"ns\": %llu}}\n",
           failures, calls, comms, STATIC_KERNEL, STATIC_KERNEL_NS);
    return failures != 0;
}
