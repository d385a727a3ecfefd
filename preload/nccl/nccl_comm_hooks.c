/*
 * nccl_comm_hooks.c - NCCL communicators made, split and ended, interposed
 * by symbol (and handed out by dlsym): one PI_REC_NCCL_COMM each, with the
 * communicator, its rank and size, and a hash of the unique id that every
 * rank of it was given, so the analyzer can match ranks without clocks.
 */
#include <errno.h>

#include "nccl_hooks.h"

static void *_Atomic ncclCommInitRank_real, *_Atomic ncclCommInitRankConfig_real,
    *_Atomic ncclCommInitAll_real, *_Atomic ncclCommInitRankScalable_real,
    *_Atomic ncclCommSplit_real, *_Atomic ncclCommFinalize_real, *_Atomic ncclCommDestroy_real,
    *_Atomic ncclCommAbort_real, *_Atomic ncclCommUserRank_real, *_Atomic ncclCommCount_real;

static void emit(unsigned op, ncclResult_t r, uint64_t start, const void *comm, uint64_t hash,
                 int rank, int nranks)
{
    pi_emit(PI_REC_NCCL_COMM, PI_NCCL_COMM_FLAGS(op, pi_nccl_failed(r)), start,
            pi_clock_ticks() - start, (uint64_t)(uintptr_t)comm, hash,
            PI_NCCL_RANKS(rank, nranks));
}

static uint64_t id_hash(const ncclUniqueId *ids, int count)
{
    return ids && count > 0 ? pi_nccl_hash(PI_NCCL_HASH_START, ids, sizeof(*ids) * (uint64_t)count)
                            : 0;
}

/* A communicator made from unique ids: @call fills *@comm. */
#define INIT(op, comm, hash, rank, nranks, call)                                                  \
    do {                                                                                          \
        if (!pi_nccl_active())                                                                    \
            return call;                                                                          \
        uint64_t start = pi_clock_ticks();                                                        \
        pi_nccl_depth++;                                                                          \
        ncclResult_t r = call;                                                                    \
        pi_nccl_depth--;                                                                          \
        int saved = errno;                                                                        \
        void *made = comm && !pi_nccl_failed(r) ? (void *)*(comm) : NULL;                         \
        pi_nccl_comm_remember(made, hash);                                                        \
        emit(op, r, start, made, hash, rank, nranks);                                             \
        errno = saved;                                                                            \
        return r;                                                                                 \
    } while (0)

PI_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                        int rank)
{
    NCCL_REAL(ncclResult_t(*)(ncclComm_t *, int, ncclUniqueId, int), ncclCommInitRank);
    INIT(PI_NCCL_COMM_INIT_RANK, comm, id_hash(&commId, 1), rank, nranks,
         real(comm, nranks, commId, rank));
}

PI_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                              int rank, ncclConfig_t *config)
{
    NCCL_REAL(ncclResult_t(*)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *),
              ncclCommInitRankConfig);
    INIT(PI_NCCL_COMM_INIT_CONFIG, comm, id_hash(&commId, 1), rank, nranks,
         real(comm, nranks, commId, rank, config));
}

/* Several unique ids spread the bootstrap: the hash is of all of them, in order. */
PI_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nId,
                                                ncclUniqueId *commIds, ncclConfig_t *config)
{
    NCCL_REAL(ncclResult_t(*)(ncclComm_t *, int, int, int, ncclUniqueId *, ncclConfig_t *),
              ncclCommInitRankScalable);
    INIT(PI_NCCL_COMM_INIT_SCALABLE, comm, id_hash(commIds, nId), rank, nranks,
         real(comm, nranks, rank, nId, commIds, config));
}

/*
 * Every rank in this process: NCCL makes the unique id inside, so the
 * hash is of what the ranks share here (the first communicator and the
 * count). One record per communicator, rank i being comm[i].
 */
PI_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
    NCCL_REAL(ncclResult_t(*)(ncclComm_t *, int, const int *), ncclCommInitAll);
    if (!pi_nccl_active())
        return real(comm, ndev, devlist);
    uint64_t start = pi_clock_ticks();
    pi_nccl_depth++;
    ncclResult_t r = real(comm, ndev, devlist);
    pi_nccl_depth--;
    int saved = errno;
    if (pi_nccl_failed(r) || !comm || ndev <= 0) {
        emit(PI_NCCL_COMM_INIT_ALL, r, start, NULL, 0, 0, ndev);
    } else {
        uint64_t hash = pi_nccl_hash(PI_NCCL_HASH_START, &comm[0], sizeof(comm[0]));
        hash = pi_nccl_hash(hash, &ndev, sizeof(ndev));
        for (int i = 0; i < ndev; i++) {
            pi_nccl_comm_remember(comm[i], hash);
            emit(PI_NCCL_COMM_INIT_ALL, r, start, comm[i], hash, i, ndev);
        }
    }
    errno = saved;
    return r;
}

/* The rank and size of a communicator, by asking NCCL (not recorded); -1 when it cannot say. */
static void rank_and_size(ncclComm_t comm, int *rank, int *nranks)
{
    *rank = *nranks = -1;
    typedef ncclResult_t (*query_fn)(const ncclComm_t, int *);
    query_fn user_rank = (query_fn)pi_nccl_real(&ncclCommUserRank_real, "ncclCommUserRank");
    query_fn count = (query_fn)pi_nccl_real(&ncclCommCount_real, "ncclCommCount");
    if (comm && user_rank && user_rank(comm, rank) != ncclSuccess)
        *rank = -1;
    if (comm && count && count(comm, nranks) != ncclSuccess)
        *nranks = -1;
}

/* The ranks of the new communicator share their parent, color and key's hash. */
PI_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                     ncclConfig_t *config)
{
    NCCL_REAL(ncclResult_t(*)(ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *), ncclCommSplit);
    if (!pi_nccl_active())
        return real(comm, color, key, newcomm, config);
    uint64_t start = pi_clock_ticks();
    pi_nccl_depth++;
    ncclResult_t r = real(comm, color, key, newcomm, config);
    int saved = errno;
    ncclComm_t made = newcomm && !pi_nccl_failed(r) ? *newcomm : NULL;
    int rank, nranks;
    rank_and_size(made, &rank, &nranks);
    pi_nccl_depth--;
    uint64_t parent = pi_nccl_comm_hash(comm);
    int color_key[2] = {color, key};
    uint64_t hash = pi_nccl_hash(pi_nccl_hash(PI_NCCL_HASH_START, &parent, sizeof(parent)),
                                 color_key, sizeof(color_key));
    pi_nccl_comm_remember(made, hash);
    emit(PI_NCCL_COMM_SPLIT, r, start, made, made ? hash : 0, rank, nranks);
    errno = saved;
    return r;
}

/* The end of a communicator: its hash as recorded when it was made; rank and size -1. */
#define END(op, name)                                                                             \
    PI_EXPORT ncclResult_t name(ncclComm_t comm)                                                  \
    {                                                                                             \
        NCCL_REAL(ncclResult_t(*)(ncclComm_t), name);                                             \
        if (!pi_nccl_active())                                                                    \
            return real(comm);                                                                    \
        uint64_t start = pi_clock_ticks();                                                        \
        uint64_t hash = pi_nccl_comm_hash(comm);                                                  \
        pi_nccl_depth++;                                                                          \
        ncclResult_t r = real(comm);                                                              \
        pi_nccl_depth--;                                                                          \
        int saved = errno;                                                                        \
        emit(op, r, start, comm, hash, -1, -1);                                                   \
        errno = saved;                                                                            \
        return r;                                                                                 \
    }

END(PI_NCCL_COMM_FINALIZE, ncclCommFinalize)
END(PI_NCCL_COMM_DESTROY, ncclCommDestroy)
END(PI_NCCL_COMM_ABORT, ncclCommAbort)

#define ENTRY(name) {#name, (void *)name, &name##_real}
const struct pi_hook_entry pi_nccl_comm_entries[] = {
    ENTRY(ncclCommInitRank), ENTRY(ncclCommInitRankConfig), ENTRY(ncclCommInitRankScalable),
    ENTRY(ncclCommInitAll),  ENTRY(ncclCommSplit),          ENTRY(ncclCommFinalize),
    ENTRY(ncclCommDestroy),  ENTRY(ncclCommAbort),          {NULL, NULL, NULL}};
