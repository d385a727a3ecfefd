/*
 * nccl_common.c - what the NCCL hooks share (nccl_hooks.h): finding the
 * real functions and the unique-id hashes of communicators.
 */
#include "nccl_hooks.h"

#include <stdatomic.h>

#include "core/diagnostics.h"
#include "cuda/cuda_common.h"
#include "cuda/entry_points.h"

__thread int pi_nccl_depth __attribute__((tls_model("initial-exec")));

void *pi_nccl_real(void *_Atomic *slot, const char *name)
{
    void *fn = pi_resolve_slot(slot, name);
    if (__builtin_expect(fn == NULL, 0)) {
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            pi_diag("%s called but no loaded library defines it: answered ncclSystemError", name);
    }
    return fn;
}

uint64_t pi_nccl_hash(uint64_t hash, const void *bytes, uint64_t length)
{
    const unsigned char *b = bytes;
    for (uint64_t i = 0; i < length; i++) {
        hash ^= b[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

/* ---- communicator -> hash, lock-free: written at init, read at split ---- */

#define COMM_SLOTS 4096
static struct {
    _Atomic uintptr_t comm;
    _Atomic uint64_t hash;
} comms[COMM_SLOTS];

static uint64_t slot_of(const void *comm)
{
    uintptr_t p = (uintptr_t)comm;
    return ((p ^ (p >> 17)) * 0x9E3779B97F4A7C15ull) % COMM_SLOTS;
}

void pi_nccl_comm_remember(const void *comm, uint64_t hash)
{
    if (!comm)
        return;
    uint64_t h = slot_of(comm);
    /* a destroyed communicator's handle may come back for a new one: overwrite it */
    for (unsigned probe = 0; probe < 64; probe++) {
        uintptr_t expected = 0, key = (uintptr_t)comm;
        unsigned i = (unsigned)((h + probe) % COMM_SLOTS);
        if (atomic_compare_exchange_strong(&comms[i].comm, &expected, key) || expected == key) {
            atomic_store(&comms[i].hash, hash);
            return;
        }
    }
}

uint64_t pi_nccl_comm_hash(const void *comm)
{
    uint64_t h = slot_of(comm);
    for (unsigned probe = 0; comm && probe < 64; probe++) {
        unsigned i = (unsigned)((h + probe) % COMM_SLOTS);
        uintptr_t key = atomic_load(&comms[i].comm);
        if (key == (uintptr_t)comm)
            return atomic_load(&comms[i].hash);
        if (key == 0)
            return 0;
    }
    return 0;
}
