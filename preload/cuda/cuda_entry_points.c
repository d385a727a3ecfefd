/*
 * cuda_entry_points.c - the ways callers get driver functions without
 * the PLT: cuGetProcAddress (both forms) and dlsym.
 *
 * cudart dlopens libcuda.so.1, looks up cuGetProcAddress_v2 with dlsym
 * and then resolves its whole table through it; cuBLAS, cuDNN and Triton
 * do much the same. A wrapper handed out for cuGetProcAddress wraps what
 * it returns, for every version and flag, or everything after the first
 * lookup escapes.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "cuda_common.h"
#include "cuda_driver_hooks.h"
#include "hook.h"

typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, cuuint64_t,
                                   CUdriverProcAddressQueryResult *);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, cuuint64_t);

static void *_Atomic real_v1;
static void *_Atomic real_v2;

static void *real_get_proc(void *_Atomic *slot, const char *symbol)
{
    void *fn = atomic_load(slot);
    if (!fn) {
        fn = pi_cuda_symbol(symbol);
        void *expected = NULL;
        if (fn)
            atomic_compare_exchange_strong(slot, &expected, fn);
    }
    return fn;
}

PI_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                               cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *status)
{
    pi_ensure_init();
    get_proc_v2_fn real = (get_proc_v2_fn)real_get_proc(&real_v2, "cuGetProcAddress_v2");
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = pi_cuda_wrap_driver(symbol, version, flags, *pfn);
    return r;
}

/* The four-argument form of CUDA 11.3; cuda.h renames cuGetProcAddress, hence the label. */
PI_EXPORT CUresult CUDAAPI proc_address_v1(const char *symbol, void **pfn, int version,
                                           cuuint64_t flags) __asm__("cuGetProcAddress");
PI_EXPORT CUresult CUDAAPI proc_address_v1(const char *symbol, void **pfn, int version,
                                           cuuint64_t flags)
{
    pi_ensure_init();
    get_proc_v1_fn real = (get_proc_v1_fn)real_get_proc(&real_v1, "cuGetProcAddress");
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = pi_cuda_wrap_driver(symbol, version, flags, *pfn);
    return r;
}

void *pi_cuda_wrap_proc_address(int version, void *real)
{
    int v2 = version >= 12000;
    void *_Atomic *slot = v2 ? &real_v2 : &real_v1;
    void *ours = v2 ? (void *)cuGetProcAddress_v2 : (void *)proc_address_v1;
    if (real == ours)
        return real;
    void *expected = NULL;
    if (atomic_compare_exchange_strong(slot, &expected, real) || expected == real)
        return ours;
    return real;
}

/* ---- dlsym ---- */

static void *(*real_dlsym)(void *, const char *);

static void resolve_dlsym(void)
{
    /* dlsym moved into libc with version GLIBC_2.34; older systems have 2.2.5 */
    real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real_dlsym)
        real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
}

/* RTLD_NEXT as the caller meant it: the first object after the caller's that defines @name. */
static void *next_after(const void *caller, const char *name)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1(caller, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return NULL;
    for (struct link_map *l = map->l_next; l; l = l->l_next) {
        void *found = real_dlsym(l, name);
        struct link_map *owner = NULL;
        if (found && dladdr1(found, &info, (void **)&owner, RTLD_DL_LINKMAP) && owner == l)
            return found;
    }
    return NULL;
}

static __attribute__((noinline)) void *cuda_dlsym(void *handle, const char *name,
                                                  const void *caller)
{
    int guard = pi_guard_enter();
    void *found = handle == RTLD_NEXT ? next_after(caller, name) : real_dlsym(handle, name);
    pi_guard_restore(guard);
    if (!found || pi_in_self(found))
        return found;
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
    if (__builtin_expect(!real_dlsym, 0))
        resolve_dlsym();
    if (!pi_is_cuda_driver_name(name) || pi_guarded())
        return real_dlsym(handle, name);
    return cuda_dlsym(handle, name, __builtin_return_address(0));
}
