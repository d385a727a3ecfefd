/*
 * entry_points.h - the CUDA driver API (libcuda), reached three ways:
 * by exported symbol, through dlsym on the driver, and through
 * cuGetProcAddress / cudaGetDriverEntryPoint, which cudart, cuBLAS, cuDNN
 * and Triton use. Every path hands out the same wrappers; each wrapper
 * calls the real function of its own flavour (legacy or per-thread
 * default stream).
 */
#ifndef PI_ENTRY_POINTS_H
#define PI_ENTRY_POINTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/value_redirect.h"

/**
 * pi_cuda_wrap_driver - the wrapper to hand out for driver entry @name
 * @name: base name as given to cuGetProcAddress ("cuMemAlloc")
 * @version: the CUDA version asked for; older ABIs are not wrapped
 * @flags: cuGetProcAddress flags (per-thread default stream or not)
 * @real: what the driver returned
 * Return: our wrapper, or @real when this entry is not one we record.
 */
void *pi_cuda_wrap_driver(const char *name, int version, unsigned long long flags, void *real);

/**
 * pi_cuda_wrap_symbol - the wrapper for a driver symbol looked up by its
 * full name with dlsym ("cuMemAlloc_v2", "cuLaunchKernel_ptsz")
 * Return: our wrapper, or @real.
 */
void *pi_cuda_wrap_symbol(const char *symbol, void *real);

/**
 * pi_cuda_wrap_proc_address - our cuGetProcAddress wrapper of the form
 * @version asks for (the four-argument one before 12.0), remembering @real
 */
void *pi_cuda_wrap_proc_address(int version, void *real);

/**
 * pi_cuda_driver_redirects - for attach: every value the loaded @driver
 * hands out for an entry we wrap (by symbol, and by cuGetProcAddress at
 * the driver's version in both stream flavours), each now behind its
 * wrapper, paired with that wrapper
 * Return: pairs written to @out, at most @max.
 */
size_t pi_cuda_driver_redirects(void *driver, struct pi_value_redirect *out, size_t max);

/* One hooked function of a library above cuda/ (NCCL, cuBLAS): its name, our hook, and the
 * real function once found. */
struct pi_hook_entry {
    const char *name;
    void *hook;
    void *_Atomic *real;
};

/**
 * pi_hook_from_tables - our hook for @name, found by dlsym at @real, from @count tables of
 * entries, each ended by a NULL name (pi_hook_behind)
 * Return: the hook, or @real when @name is not hooked or another library sits behind it.
 */
void *pi_hook_from_tables(const struct pi_hook_entry *const *tables, unsigned count,
                          const char *name, void *real);

/**
 * pi_resolve_slot - the real function of @name kept in @slot: found once (every loaded
 * object but ours), or set by a dlsym we answered (pi_hook_behind)
 * Return: it, or NULL when no loaded library defines @name.
 */
void *pi_resolve_slot(void *_Atomic *slot, const char *name);

/**
 * pi_hook_behind - @hook, to be handed out for @real, which becomes the function in @slot
 * that @hook calls
 * Return: @hook, or @real itself when @real is @hook or another library's function already
 * sits in @slot.
 */
void *pi_hook_behind(void *_Atomic *slot, void *hook, void *real);

/**
 * pi_dlsym_register - dlsym of a name @names accepts hands out what
 * @wrap(name, found) returns: how a part above cuda/ (nccl/) wraps its
 * library's functions fetched with dlsym. Called once per part (nccl/, blas/), at start.
 */
void pi_dlsym_register(int (*names)(const char *), void *(*wrap)(const char *, void *));

/* pi_is_cuda_driver_name - "cu" then an upper-case letter: never cudnn*, cublas*, cuda* */
static inline int pi_is_cuda_driver_name(const char *name)
{
    return name && name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z';
}

#endif
