/*
 * fake_nccl.c - a libnccl.so.2 for the tests, built on the real nccl.h of
 * the nvidia-nccl-cu13 wheel, with the entries the profiler hooks and the
 * queries it makes. Communicators live in this process only: every rank of
 * one is the caller. Device work follows fake_nccl.h.
 *
 * With FAKE_NCCL_RENDEZVOUS=DIR, a communicator made by ncclCommInitRank
 * spans processes: DIR/<unique id> holds each rank's count of calls made
 * on it (its sequence number, the truth a test reads back), and a call's
 * kernel does not start until every rank made that call, as NCCL's waits
 * on the device for its peers: a rank that never comes leaves the others
 * blocked in their next synchronisation.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <nccl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_nccl.h"

#define EXPORT __attribute__((visibility("default")))

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *);

struct ncclComm {
    int rank, nranks;
    _Atomic uint64_t *made; /* FAKE_NCCL_RENDEZVOUS: each rank's calls on it; NULL: none */
    uint64_t seq;           /* this rank's calls on it */
};

/* ---- rendezvous: a call's kernel waits until every rank made the call ---- */

struct arrival {
    struct ncclComm *comm;
    uint64_t seq;
};

static int everyone_came(void *arg)
{
    const struct arrival *a = arg;
    for (int i = 0; i < a->comm->nranks; i++)
        if (atomic_load(&a->comm->made[i]) < a->seq)
            return 0;
    return 1;
}

/* DIR/<the unique id in hex>: one count a rank, shared by the processes of the ranks */
static _Atomic uint64_t *rendezvous(const ncclUniqueId *id, int nranks)
{
    const char *dir = getenv("FAKE_NCCL_RENDEZVOUS");
    if (!dir || !id)
        return NULL;
    char path[4096];
    int at = snprintf(path, sizeof(path), "%s/", dir);
    for (int i = 0; i < 16 && at < (int)sizeof(path) - 3; i++)
        at += snprintf(path + at, sizeof(path) - (size_t)at, "%02x", (unsigned char)id->internal[i]);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    size_t size = (size_t)nranks * sizeof(uint64_t);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return map == MAP_FAILED ? NULL : map;
}

/* The calling thread's next kernel waits for every rank of @comm to have made call @seq. */
static void gate_next_kernel(struct ncclComm *comm, uint64_t seq)
{
    static void (*gate)(int (*)(void *), void *);
    if (!gate) {
        void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        gate = driver ? (void (*)(int (*)(void *), void *))dlsym(driver, "fake_gate_next_kernel")
                      : NULL;
    }
    struct arrival *a = malloc(sizeof(*a)); /* the gate may stay closed for ever: kept */
    if (!gate || !a) {
        free(a);
        return;
    }
    *a = (struct arrival){comm, seq};
    gate(everyone_came, a);
}

/* @comm's next call made: counted where the other ranks see it */
static uint64_t arrive(struct ncclComm *comm)
{
    if (!comm->made)
        return 0;
    atomic_store(&comm->made[comm->rank], ++comm->seq);
    return comm->seq;
}

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
static __thread struct ncclComm *group_comm; /* the group's last call across processes */
static __thread uint64_t group_seq;

static ncclResult_t work(int kernel, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                         cudaStream_t stream)
{
    if (!comm || !type_size(datatype))
        return ncclInvalidArgument;
    unsigned long long ns = FAKE_NCCL_KERNEL_NS(count * type_size(datatype));
    uint64_t seq = arrive(comm);
    if (group_depth == 0) {
        if (seq)
            gate_next_kernel(comm, seq);
        return launch(kernel, ns, stream);
    }
    if (group_kernel < 0) {
        group_kernel = kernel;
        group_stream = stream;
    }
    if (seq) {
        group_comm = comm;
        group_seq = seq;
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
    if (group_comm)
        gate_next_kernel(group_comm, group_seq);
    ncclResult_t r = launch(group_kernel, group_ns, group_stream);
    group_kernel = -1;
    group_ns = 0;
    group_comm = NULL;
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
    ncclResult_t r = make(comm, nranks, rank);
    if (r == ncclSuccess)
        (*comm)->made = rendezvous(&id, nranks);
    return r;
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

/* A communicator across processes is kept: a gate still closed may read it. */
static void end(ncclComm_t comm)
{
    if (comm && !comm->made)
        free(comm);
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    end(comm);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    end(comm);
    return ncclSuccess;
}

EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
    return result == ncclSuccess ? "no error" : "fake error";
}
