/*
 * dlsym_hook.c - dlsym of a driver name ("cuMemAlloc_v2", "cuGetProcAddress_v2")
 * hands out our wrapper (entry_points.c), and of another library's name
 * (NCCL's, cuBLAS's) the wrapper its part registered; every other name goes straight
 * to glibc, keeping RTLD_NEXT's meaning for the caller.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>

#include "core/hook.h"
#include "core/real_functions.h"
#include "cuda_common.h"
#include "entry_points.h"

/* RTLD_NEXT as the caller meant it: the first object after the caller's that defines @name. */
static void *next_after(const void *caller, const char *name)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1(caller, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return NULL;
    for (struct link_map *l = map->l_next; l; l = l->l_next) {
        void *found = pi_real_dlsym(l, name);
        struct link_map *owner = NULL;
        if (found && dladdr1(found, &info, (void **)&owner, RTLD_DL_LINKMAP) && owner == l)
            return found;
    }
    return NULL;
}

/* Other libraries' names and their wrappers (pi_dlsym_register): set once at start, each
 * part's pair published by the count. */
#define MAX_PARTS 4
static struct {
    int (*names)(const char *);
    void *(*wrap)(const char *, void *);
} parts[MAX_PARTS];
static _Atomic unsigned part_count;

void pi_dlsym_register(int (*names)(const char *), void *(*wrap)(const char *, void *))
{
    unsigned i = atomic_load(&part_count);
    if (i == MAX_PARTS)
        return;
    parts[i].names = names;
    parts[i].wrap = wrap;
    atomic_store(&part_count, i + 1);
}

/* The part whose library @name belongs to, or -1. */
static int part_of(const char *name)
{
    unsigned count = atomic_load_explicit(&part_count, memory_order_acquire);
    for (unsigned i = 0; i < count; i++)
        if (parts[i].names(name))
            return (int)i;
    return -1;
}

/* Whether dlsym of @name hands out a wrapper of ours. */
static int wrapped_name(const char *name)
{
    return pi_is_cuda_driver_name(name) || part_of(name) >= 0;
}

static __attribute__((noinline)) void *cuda_dlsym(void *handle, const char *name,
                                                  const void *caller)
{
    int guard = pi_guard_enter();
    void *found = handle == RTLD_NEXT ? next_after(caller, name) : pi_real_dlsym(handle, name);
    pi_guard_restore(guard);
    if (!found || pi_in_self(found))
        return found;
    if (!pi_is_cuda_driver_name(name)) {
        int part = part_of(name);
        return part >= 0 ? parts[part].wrap(name, found) : found;
    }
    return pi_cuda_wrap_symbol(name, found);
}

/*
 * Everything but driver names goes straight on, as a tail call: glibc's
 * dlsym reads its caller's address for RTLD_NEXT, and after a jump that
 * is still the application's address, not ours. (Built without stack
 * protection, see CMakeLists.txt, so that the jump stays a jump.)
 */
PI_EXPORT void *dlsym(void *handle, const char *name)
{
    if (__builtin_expect(!pi_real_dlsym, 0))
        pi_real_dlsym_resolve();
    if (!wrapped_name(name) || pi_guarded())
        return pi_real_dlsym(handle, name);
    return cuda_dlsym(handle, name, __builtin_return_address(0));
}
