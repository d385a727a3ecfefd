/*
 * nccl_entry_points.c - NCCL functions fetched with dlsym get our hooks
 * (nccl_entry_points.h), from the entry tables of the hook files.
 */
#include "nccl_entry_points.h"

#include <string.h>

#include "cuda/entry_points.h"
#include "nccl_hooks.h"

int pi_is_nccl_name(const char *name)
{
    if (name && name[0] == 'p')
        name++;
    return name && strncmp(name, "nccl", 4) == 0 && name[4] >= 'A' && name[4] <= 'Z';
}

void *pi_nccl_wrap_symbol(const char *name, void *real)
{
    const struct pi_hook_entry *const tables[] = {pi_nccl_comm_entries, pi_nccl_collective_entries};
    return pi_hook_from_tables(tables, 2, name, real);
}
