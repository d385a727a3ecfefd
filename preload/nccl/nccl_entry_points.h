/*
 * nccl_entry_points.h - NCCL functions fetched with dlsym: the dlsym hook
 * (cuda/dlsym_hook.c) hands out our hooks for them, through the pair that
 * library.c registers, since cuda/ may not call nccl/.
 */
#ifndef PI_NCCL_ENTRY_POINTS_H
#define PI_NCCL_ENTRY_POINTS_H

/* pi_is_nccl_name - "nccl" or "pncc" then an upper-case letter */
int pi_is_nccl_name(const char *name);

/**
 * pi_nccl_wrap_symbol - our hook for the NCCL function @name that dlsym
 * found at @real, keeping @real as the function it calls
 * Return: our hook, or @real when @name is not hooked or another
 * libnccl's function already sits behind it.
 */
void *pi_nccl_wrap_symbol(const char *name, void *real);

#endif
