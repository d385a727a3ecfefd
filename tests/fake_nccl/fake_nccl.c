/*
 * fake_nccl.c - a libnccl.so.2 for the tests, built on the real nccl.h of
 * the nvidia-nccl-cu13 wheel, with the entries the profiler hooks and the
 * queries it makes. Communicators live in this process only: every rank of
 * one is the caller. Device work follows fake_nccl.h.
 */
#include <nccl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_nccl.h"

#define EXPORT __attribute__((visibility("default")))

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);

struct ncclComm {
    int rank, nranks;
};

enum { K_ALL_REDUCE, K_BROADCAST, K_REDUCE, K_ALL_GATHER, K_REDUCE_SCATTER, K_SEND_RECV, K_COUNT };
static const char *const kernel_names[K_COUNT] = {
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ncclDevKernel_Broadcast_RING_LL",
    "ncclDevKernel_Reduce_Sum_f32_RING_LL",    "ncclDevKernel_AllGather_RING_LL",
    "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "ncclDevKernel_SendRecv"};
/* host stubs: distinct addresses the fake runtime knows the kernels by */
static const char stubs[K_COUNT];

__attribute__((constructor)) static void register_kernels(void)
{
    void **module = __cudaRegisterFatBinary(NULL);
    for (int k = 0; k < K_COUNT; k++)
        __cudaRegisterFunction(module, &stubs[k], (char *)kernel_names[k], kernel_names[k], -1,
                               NULL, NULL, NULL, NULL, NULL);
}

static size_t type_size(ncclDataType_t t)
{
    static const size_t sizes[ncclNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return (unsigned)t < ncclNumTypes ? sizes[t] : 0;
}

static ncclResult_t launch(int kernel, unsigned long long ns, cudaStream_t stream)
{
    void *args[] = {&ns};
    dim3 one = {1, 1, 1};
    return cudaLaunchKernel(&stubs[kernel], one, one, args, 0, stream) == cudaSuccess
               ? ncclSuccess
               : ncclUnhandledCudaError;
}

/* ---- groups: what the calls of the open group queued, per thread ---- */

static __thread int group_depth, group_kernel = -1;
static __thread unsigned long long group_ns;
static __thread cudaStream_t group_stream;

static ncclResult_t work(int kernel, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                         cudaStream_t stream)
{
    if (!comm || !type_size(datatype))
        return ncclInvalidArgument;
    unsigned long long ns = FAKE_NCCL_KERNEL_NS(count * type_size(datatype));
    if (group_depth == 0)
        return launch(kernel, ns, stream);
    if (group_kernel < 0) {
        group_kernel = kernel;
        group_stream = stream;
    }
    group_ns += ns;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupStart(void)
{
    group_depth++;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupEnd(void)
{
    if (group_depth == 0)
        return ncclInvalidUsage;
    if (--group_depth > 0 || group_kernel < 0)
        return ncclSuccess;
    ncclResult_t r = launch(group_kernel, group_ns, group_stream);
    group_kernel = -1;
    group_ns = 0;
    return r;
}

EXPORT ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t t,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    (void)s, (void)r, (void)op;
    return work(K_ALL_REDUCE, count, t, comm, stream);
}

EXPORT ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t t, int root,
                                  ncclComm_t comm, cudaStream_t stream)
{
    (void)s, (void)r;
    return comm && root >= comm->nranks ? ncclInvalidArgument
                                        : work(K_BROADCAST, count, t, comm, stream);
}

/* As NCCL's own: the in-place broadcast by its newer name (through our export). */
EXPORT ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t t, int root,
                              ncclComm_t comm, cudaStream_t stream)
{
    return ncclBroadcast(buff, buff, count, t, root, comm, stream);
}

EXPORT ncclResult_t ncclReduce(const void *s, void *r, size_t count, ncclDataType_t t,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    (void)s, (void)r, (void)op, (void)root;
    return work(K_REDUCE, count, t, comm, stream);
}

EXPORT ncclResult_t ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t t,
                                  ncclComm_t comm, cudaStream_t stream)
{
    (void)s, (void)r;
    return work(K_ALL_GATHER, count, t, comm, stream);
}

EXPORT ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    (void)s, (void)r, (void)op;
    return work(K_REDUCE_SCATTER, count, t, comm, stream);
}

EXPORT ncclResult_t ncclAlltoAll(const void *s, void *r, size_t count, ncclDataType_t t,
                                 ncclComm_t comm, cudaStream_t stream)
{
    (void)s, (void)r;
    return work(K_SEND_RECV, count, t, comm, stream);
}

EXPORT ncclResult_t ncclSend(const void *s, size_t count, ncclDataType_t t, int peer,
                             ncclComm_t comm, cudaStream_t stream)
{
    (void)s, (void)peer;
    return work(K_SEND_RECV, count, t, comm, stream);
}

EXPORT ncclResult_t ncclRecv(void *r, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t stream)
{
    (void)r, (void)peer;
    return work(K_SEND_RECV, count, t, comm, stream);
}

/* ---- communicators ---- */

EXPORT ncclResult_t ncclGetVersion(int *version)
{
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static unsigned counter;
    memset(id, 0, sizeof(*id));
    unsigned values[3] = {(unsigned)getpid(), ++counter, (unsigned)time(NULL)};
    memcpy(id->internal, values, sizeof(values));
    return ncclSuccess;
}

static ncclResult_t make(ncclComm_t *comm, int nranks, int rank)
{
    if (!comm || nranks <= 0 || rank < 0 || rank >= nranks)
        return ncclInvalidArgument;
    if (!(*comm = calloc(1, sizeof(**comm))))
        return ncclSystemError;
    (*comm)->rank = rank;
    (*comm)->nranks = nranks;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    (void)id;
    return make(comm, nranks, rank);
}

EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                           ncclConfig_t *config)
{
    (void)id, (void)config;
    return make(comm, nranks, rank);
}

EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nid,
                                             ncclUniqueId *ids, ncclConfig_t *config)
{
    (void)config;
    return nid < 1 || !ids ? ncclInvalidArgument : make(comm, nranks, rank);
}

/* As NCCL's own: the ranks made through our ncclGroupStart/ncclCommInitRank exports. */
EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    (void)devlist;
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; i < ndev && r == ncclSuccess; i++)
        r = ncclCommInitRank(&comms[i], ndev, id, i);
    ncclResult_t end = ncclGroupEnd();
    return r != ncclSuccess ? r : end;
}

/* Every rank takes the same color here: the new communicator is the parent's ranks, by key. */
EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                  ncclConfig_t *config)
{
    (void)key, (void)config;
    if (!comm || !newcomm)
        return ncclInvalidArgument;
    if (color == NCCL_SPLIT_NOCOLOR) {
        *newcomm = NULL;
        return ncclSuccess;
    }
    return make(newcomm, comm->nranks, comm->rank);
}

EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    if (!comm)
        return ncclInvalidArgument;
    *rank = comm->rank;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    if (!comm)
        return ncclInvalidArgument;
    *count = comm->nranks;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    return comm ? ncclSuccess : ncclInvalidArgument;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    free(comm);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    free(comm);
    return ncclSuccess;
}

EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
    return result == ncclSuccess ? "no error" : "fake error";
}
