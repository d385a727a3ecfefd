/*
 * entry_points.c - the ways callers get driver functions without the PLT:
 * cuGetProcAddress (both forms, hooked here), dlsym (dlsym_hook.c) and
 * cudaGetDriverEntryPoint (runtime hooks) all hand out the wrappers of the
 * driver table, and keep what the driver returned as the real function.
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

#include "core/hook.h"
#include "core/real_functions.h"
#include "cuda_common.h"
#include "driver_entries.h"
#include "entry_points.h"

typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, cuuint64_t,
                                   CUdriverProcAddressQueryResult *);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, cuuint64_t);

static void *_Atomic real_v1;
static void *_Atomic real_v2;

static void *real_get_proc(void *_Atomic *slot, const char *symbol)
{
    void *fn = atomic_load(slot);
    if (!fn) {
        fn = pi_loaded_symbol(symbol);
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

/* Whether @a and @b are defined in the same loaded object. */
static int same_object(const void *a, const void *b)
{
    Dl_info x, y;
    return dladdr(a, &x) && dladdr(b, &y) && x.dli_fbase == y.dli_fbase;
}

void *pi_hook_behind(void *_Atomic *slot, void *hook, void *real)
{
    if (!real || real == hook)
        return real;
    void *expected = NULL;
    /* a library may answer with another address than its exported symbol's: the same
     * function of the same library */
    if (atomic_compare_exchange_strong(slot, &expected, real) || expected == real ||
        same_object(expected, real))
        return hook;
    return real; /* a second copy of the library: its calls go unrecorded rather than astray */
}

void *pi_resolve_slot(void *_Atomic *slot, const char *name)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    if (__builtin_expect(fn != NULL, 1))
        return fn;
    if (!(fn = pi_loaded_symbol(name)))
        return NULL;
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(slot, &expected, fn))
        fn = expected; /* a dlsym we answered set it first */
    return fn;
}

void *pi_hook_from_tables(const struct pi_hook_entry *const *tables, unsigned count,
                          const char *name, void *real)
{
    for (unsigned t = 0; real && t < count; t++)
        for (const struct pi_hook_entry *e = tables[t]; e->name; e++)
            if (strcmp(e->name, name) == 0)
                return pi_hook_behind(e->real, e->hook, real);
    return real;
}

void *pi_cuda_wrap_proc_address(int version, void *real)
{
    int v2 = version >= 12000;
    return pi_hook_behind(v2 ? &real_v2 : &real_v1,
                          v2 ? (void *)cuGetProcAddress_v2 : (void *)proc_address_v1, real);
}

/* ---- the wrapper table ---- */

static _Atomic int table_ready;

/* Our wrappers go into the table on first use: the hook files fill their own slots. */
static void ensure_table(void)
{
    if (!atomic_load_explicit(&table_ready, memory_order_acquire)) {
        pi_driver_memory_wrappers(pi_driver_entries);
        pi_driver_launch_wrappers(pi_driver_entries);
        atomic_store_explicit(&table_ready, 1, memory_order_release);
    }
}

/* Keep @real for @flavour of @e; hand out our wrapper when it routes there.
 * The driver may hand out one address for the entry by cuGetProcAddress and
 * another for its exported symbol: both are that driver's, and the wrapper
 * calling either is the same call. */
static void *adopt(struct pi_driver_entry *e, int flavour, void *real)
{
    if (!e->wrapper[flavour] || real == e->wrapper[flavour] || pi_in_self(real))
        return real;
    void *expected = NULL;
    if (atomic_compare_exchange_strong(&e->real[flavour], &expected, real) || expected == real ||
        same_object(expected, real))
        return e->wrapper[flavour];
    return real; /* another implementation already sits behind this wrapper */
}

void *pi_cuda_wrap_driver(const char *name, int version, unsigned long long flags, void *real)
{
    if (!real || !pi_is_cuda_driver_name(name))
        return real;
    ensure_table();
    if (strcmp(name, "cuGetProcAddress") == 0)
        return pi_cuda_wrap_proc_address(version, real);
    for (int i = 0; i < DRV_COUNT; i++) {
        struct pi_driver_entry *e = &pi_driver_entries[i];
        if (strcmp(e->name, name) != 0)
            continue;
        if (version < e->min_version)
            return real; /* an older ABI than our wrapper's */
        int flavour = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && e->symbol[1];
        return adopt(e, flavour, real);
    }
    return real;
}

void *pi_cuda_wrap_symbol(const char *symbol, void *real)
{
    if (!real || !pi_is_cuda_driver_name(symbol))
        return real;
    ensure_table();
    if (strcmp(symbol, "cuGetProcAddress") == 0)
        return pi_cuda_wrap_proc_address(11030, real);
    if (strcmp(symbol, "cuGetProcAddress_v2") == 0)
        return pi_cuda_wrap_proc_address(12000, real);
    for (int i = 0; i < DRV_COUNT; i++)
        for (int flavour = 0; flavour < 2; flavour++)
            if (pi_driver_entries[i].symbol[flavour] && strcmp(pi_driver_entries[i].symbol[flavour], symbol) == 0)
                return adopt(&pi_driver_entries[i], flavour, real);
    return real;
}

typedef CUresult (*proc_address_fn)(const char *, void **, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult *);

/* Pair @real with what adopting it hands out, when that is a wrapper. */
static size_t add_redirect(struct pi_value_redirect *out, size_t n, size_t max, void *real,
                           void *to)
{
    for (size_t i = 0; i < n; i++)
        if (out[i].from == real)
            return n; /* one address, one wrapper: the first pairing stands */
    if (real && to && to != real && n < max)
        out[n++] = (struct pi_value_redirect){real, to};
    return n;
}

size_t pi_cuda_driver_redirects(void *driver, struct pi_value_redirect *out, size_t max)
{
    ensure_table();
    int guard = pi_guard_enter();
    proc_address_fn proc_address = (proc_address_fn)pi_dlsym(driver, "cuGetProcAddress_v2");
    CUresult (*driver_version)(int *) =
        (CUresult(*)(int *))pi_dlsym(driver, "cuDriverGetVersion");
    int version = CUDA_VERSION;
    if (driver_version && driver_version(&version) != CUDA_SUCCESS)
        version = CUDA_VERSION;
    size_t n = 0;
    for (int i = 0; i < DRV_COUNT; i++) {
        struct pi_driver_entry *e = &pi_driver_entries[i];
        for (int flavour = 0; flavour < 2; flavour++) {
            if (!e->wrapper[flavour] || version < e->min_version)
                continue;
            void *by_symbol = pi_dlsym(driver, e->symbol[flavour]);
            void *by_address = NULL;
            CUdriverProcAddressQueryResult status;
            unsigned long long flags = flavour ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                               : CU_GET_PROC_ADDRESS_DEFAULT;
            if (proc_address &&
                proc_address(e->name, &by_address, version, flags, &status) != CUDA_SUCCESS)
                by_address = NULL;
            n = add_redirect(out, n, max, by_symbol, by_symbol ? adopt(e, flavour, by_symbol) : NULL);
            n = add_redirect(out, n, max, by_address,
                             by_address ? adopt(e, flavour, by_address) : NULL);
        }
    }
    /* and the look-up itself, so that later look-ups through a kept pointer are wrapped */
    void *v2 = pi_dlsym(driver, "cuGetProcAddress_v2"), *v1 = pi_dlsym(driver, "cuGetProcAddress");
    n = add_redirect(out, n, max, v2, v2 ? pi_cuda_wrap_proc_address(12000, v2) : NULL);
    n = add_redirect(out, n, max, v1, v1 ? pi_cuda_wrap_proc_address(11030, v1) : NULL);
    pi_guard_restore(guard);
    return n;
}
