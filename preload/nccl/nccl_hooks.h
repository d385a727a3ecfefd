/*
 * nccl_hooks.h - what the NCCL hook files share (nccl_comm_hooks.c,
 * nccl_collective_hooks.c): the real function behind a hook, the entry
 * table that dlsym hands our hooks out from, and the nesting mark.
 *
 * NCCL is never linked: its functions are looked up on first use, so a
 * process that never loads libnccl.so.2 pays nothing.
 */
#ifndef PI_NCCL_HOOKS_H
#define PI_NCCL_HOOKS_H

#include <nccl.h>
#include <stdint.h>

#include "core/hook.h"
#include "cuda/entry_points.h"

/* The entries of each hook file, ended by a NULL name. */
extern const struct pi_hook_entry pi_nccl_comm_entries[];
extern const struct pi_hook_entry pi_nccl_collective_entries[];

/* pi_nccl_real - the real function of @name, kept in @slot: found once
 * (RTLD_NEXT, then every loaded object), or set by a dlsym we answered */
void *pi_nccl_real(void *_Atomic *slot, const char *name);

/* NCCL calls in progress on this thread: calls NCCL makes to its own
 * public functions (ncclBcast to ncclBroadcast, ...) are not recorded twice */
extern __thread int pi_nccl_depth __attribute__((tls_model("initial-exec")));

/* The real function behind hook @name, as `real`: NCCL not loaded is the
 * caller's own error, said once. */
#define NCCL_REAL(type, name)                                                                     \
    __typeof__(type) real = (__typeof__(type))pi_nccl_real(&name##_real, #name);                \
    if (!real)                                                                                    \
        return ncclSystemError;

/* pi_nccl_active - record this call: recording, not ours, not nested in NCCL */
static inline int pi_nccl_active(void)
{
    return pi_nccl_depth == 0 && pi_hook_active();
}

/* pi_nccl_failed - a result that is a failure: ncclInProgress is a
 * non-blocking communicator still being made, not a failure */
static inline int pi_nccl_failed(ncclResult_t r)
{
    return r != ncclSuccess && r != ncclInProgress;
}

/* pi_nccl_hash - 64-bit FNV-1a of @length bytes, continuing from @hash
 * (start with PI_NCCL_HASH_START) */
#define PI_NCCL_HASH_START 0xcbf29ce484222325ull
uint64_t pi_nccl_hash(uint64_t hash, const void *bytes, uint64_t length);

/* The hash the ranks of communicator @comm share (0: not known), and setting it. */
uint64_t pi_nccl_comm_hash(const void *comm);
void pi_nccl_comm_remember(const void *comm, uint64_t hash);

#endif
