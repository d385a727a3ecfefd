/*
 * nccl_entry_points.c - NCCL functions fetched with dlsym get our hooks
 * (nccl_entry_points.h), from the entry tables of the hook files.
 */
#include "nccl_entry_points.h"

#include <stdatomic.h>
#include <string.h>

#include "cuda/entry_points.h"
#include "nccl_hooks.h"

int pi_is_nccl_name(const char *name)
{
    if (name && name[0] == 'p')
        name++;
    return name && strncmp(name, "nccl", 4) == 0 && name[4] >= 'A' && name[4] <= 'Z';
}

static const struct pi_nccl_entry *entry_of(const char *name)
{
    const struct pi_nccl_entry *tables[] = {pi_nccl_comm_entries, pi_nccl_collective_entries};
    for (unsigned t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
        for (const struct pi_nccl_entry *e = tables[t]; e->name; e++)
            if (strcmp(e->name, name) == 0)
                return e;
    return NULL;
}

void *pi_nccl_wrap_symbol(const char *name, void *real)
{
    const struct pi_nccl_entry *e = real ? entry_of(name) : NULL;
    return e ? pi_hook_behind(e->real, e->hook, real) : real;
}
