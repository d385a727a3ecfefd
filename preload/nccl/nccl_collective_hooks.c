/*
 * nccl_collective_hooks.c - NCCL's collectives, point-to-point calls and
 * group brackets, interposed by symbol (and handed out by dlsym): one
 * PI_REC_COLLECTIVE each, with count, datatype, reduction, peer or root,
 * communicator and stream. The kernels a call launches are recorded by
 * the CUDA launch hooks inside its span; inside a group NCCL only queues
 * the work, and ncclGroupEnd launches it.
 */
#include <errno.h>

#include "cuda/cuda_common.h"
#include "nccl_hooks.h"

/* Groups open on this thread (ncclGroupStart nests). */
static __thread int group_depth __attribute__((tls_model("initial-exec")));

static uint16_t collective_flags(unsigned func, ncclDataType_t datatype, ncclResult_t r)
{
    unsigned bits =
        (group_depth > 0 ? PI_NCCL_GROUPED : 0) | (pi_nccl_failed(r) ? PI_FLAG_FAILED : 0);
    return PI_NCCL_FLAGS(func, (unsigned)datatype, bits);
}

/* The reduction as the record keeps it: built-in ones by value, custom ones (PreMulSum) 0xff. */
static unsigned redop_of(ncclRedOp_t op)
{
    return (unsigned)op < ncclNumOps ? (unsigned)op : 0xffu;
}

/* One timed call @call of @func; @redop already in record form. */
#define COLLECTIVE(func, count, datatype, redop, peer_plus_one, comm, stream, call)               \
    do {                                                                                          \
        if (!pi_nccl_active())                                                                    \
            return call;                                                                          \
        uint64_t start = pi_clock_ticks();                                                        \
        pi_nccl_depth++;                                                                          \
        ncclResult_t r = call;                                                                    \
        pi_nccl_depth--;                                                                          \
        uint64_t end = pi_clock_ticks();                                                          \
        int saved = errno;                                                                        \
        pi_emit(PI_REC_COLLECTIVE, collective_flags(func, datatype, r), start, end - start,       \
                (uint64_t)(count), (uint64_t)(uintptr_t)(comm),                                   \
                PI_NCCL_WHERE(pi_cuda_stream_id(stream), redop, peer_plus_one));                  \
        errno = saved;                                                                            \
        return r;                                                                                 \
    } while (0)

static void *_Atomic ncclAllReduce_real, *_Atomic ncclBroadcast_real, *_Atomic ncclBcast_real,
    *_Atomic ncclReduce_real, *_Atomic ncclAllGather_real, *_Atomic ncclReduceScatter_real,
    *_Atomic ncclAlltoAll_real, *_Atomic ncclSend_real, *_Atomic ncclRecv_real,
    *_Atomic ncclGroupStart_real, *_Atomic ncclGroupEnd_real;

PI_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                     cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                               ncclComm_t, cudaStream_t);
    NCCL_REAL(fn, ncclAllReduce);
    COLLECTIVE(PI_NCCL_ALL_REDUCE, count, datatype, redop_of(op), 0, comm, stream,
               real(sendbuff, recvbuff, count, datatype, op, comm, stream));
}

PI_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                     ncclDataType_t datatype, int root, ncclComm_t comm,
                                     cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                               cudaStream_t);
    NCCL_REAL(fn, ncclBroadcast);
    COLLECTIVE(PI_NCCL_BROADCAST, count, datatype, 0, root + 1, comm, stream,
               real(sendbuff, recvbuff, count, datatype, root, comm, stream));
}

/* The older in-place broadcast: a broadcast. */
PI_EXPORT ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
                                 ncclComm_t comm, cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    NCCL_REAL(fn, ncclBcast);
    COLLECTIVE(PI_NCCL_BROADCAST, count, datatype, 0, root + 1, comm, stream,
               real(buff, count, datatype, root, comm, stream));
}

PI_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, ncclRedOp_t op, int root,
                                  ncclComm_t comm, cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                               ncclComm_t, cudaStream_t);
    NCCL_REAL(fn, ncclReduce);
    COLLECTIVE(PI_NCCL_REDUCE, count, datatype, redop_of(op), root + 1, comm, stream,
               real(sendbuff, recvbuff, count, datatype, op, root, comm, stream));
}

PI_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                     ncclDataType_t datatype, ncclComm_t comm,
                                     cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                               cudaStream_t);
    NCCL_REAL(fn, ncclAllGather);
    COLLECTIVE(PI_NCCL_ALL_GATHER, sendcount, datatype, 0, 0, comm, stream,
               real(sendbuff, recvbuff, sendcount, datatype, comm, stream));
}

PI_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                         ncclDataType_t datatype, ncclRedOp_t op,
                                         ncclComm_t comm, cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                               ncclComm_t, cudaStream_t);
    NCCL_REAL(fn, ncclReduceScatter);
    COLLECTIVE(PI_NCCL_REDUCE_SCATTER, recvcount, datatype, redop_of(op), 0, comm, stream,
               real(sendbuff, recvbuff, recvcount, datatype, op, comm, stream));
}

PI_EXPORT ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                               cudaStream_t);
    NCCL_REAL(fn, ncclAlltoAll);
    COLLECTIVE(PI_NCCL_ALL_TO_ALL, count, datatype, 0, 0, comm, stream,
               real(sendbuff, recvbuff, count, datatype, comm, stream));
}

PI_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
                                int peer, ncclComm_t comm, cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(const void *, size_t, ncclDataType_t, int, ncclComm_t,
                               cudaStream_t);
    NCCL_REAL(fn, ncclSend);
    COLLECTIVE(PI_NCCL_SEND, count, datatype, 0, peer + 1, comm, stream,
               real(sendbuff, count, datatype, peer, comm, stream));
}

PI_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                ncclComm_t comm, cudaStream_t stream)
{
    typedef ncclResult_t (*fn)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    NCCL_REAL(fn, ncclRecv);
    COLLECTIVE(PI_NCCL_RECV, count, datatype, 0, peer + 1, comm, stream,
               real(recvbuff, count, datatype, peer, comm, stream));
}

/* ---- groups: the depth is followed even while not recording, so that a
 * window opening inside a group marks its calls grouped ---- */

static ncclResult_t group_call(unsigned func, ncclResult_t (*real)(void))
{
    if (pi_nccl_depth > 0)
        return real();
    int active = pi_hook_active();
    uint64_t start = active ? pi_clock_ticks() : 0;
    pi_nccl_depth++;
    ncclResult_t r = real();
    pi_nccl_depth--;
    int saved = errno;
    if (func == PI_NCCL_GROUP_START && !pi_nccl_failed(r))
        group_depth++;
    /* NCCL closes the group on a failed end too */
    if (func == PI_NCCL_GROUP_END && group_depth > 0)
        group_depth--;
    /* a bracket inside another group is itself grouped: the start counts itself out */
    unsigned bits = (group_depth - (func == PI_NCCL_GROUP_START && !pi_nccl_failed(r)) > 0
                         ? PI_NCCL_GROUPED
                         : 0) |
                    (pi_nccl_failed(r) ? PI_FLAG_FAILED : 0);
    if (active)
        pi_emit(PI_REC_COLLECTIVE, PI_NCCL_FLAGS(func, 0, bits), start, pi_clock_ticks() - start,
                0, 0, 0);
    errno = saved;
    return r;
}

PI_EXPORT ncclResult_t ncclGroupStart(void)
{
    NCCL_REAL(ncclResult_t(*)(void), ncclGroupStart);
    return group_call(PI_NCCL_GROUP_START, real);
}

PI_EXPORT ncclResult_t ncclGroupEnd(void)
{
    NCCL_REAL(ncclResult_t(*)(void), ncclGroupEnd);
    return group_call(PI_NCCL_GROUP_END, real);
}

#define ENTRY(name) {#name, (void *)name, &name##_real}
const struct pi_hook_entry pi_nccl_collective_entries[] = {
    ENTRY(ncclAllReduce), ENTRY(ncclBroadcast),     ENTRY(ncclBcast),
    ENTRY(ncclReduce),    ENTRY(ncclAllGather),     ENTRY(ncclReduceScatter),
    ENTRY(ncclAlltoAll),  ENTRY(ncclSend),          ENTRY(ncclRecv),
    ENTRY(ncclGroupStart), ENTRY(ncclGroupEnd),     {NULL, NULL, NULL}};
