/*
 * attach_driver_tables.c - see attach_driver_tables.h. The driver is asked
 * for each entry we wrap, by symbol and by cuGetProcAddress at its own
 * version in both stream flavours: those are the values a process can
 * hold. Each is put behind its wrapper, then every word of the modules'
 * writable data equal to one of them is replaced.
 *
 * A word equal to a driver function's address is taken for a pointer to
 * it; tables in heap memory (rare: the libraries named above keep theirs
 * in static storage) are not searched.
 */
#include "attach_driver_tables.h"

#include <dlfcn.h>
#include <stdint.h>

#include "attach_bindings.h"
#include "core/clock.h"
#include "cuda/entry_points.h"
#include "core/diagnostics.h"
#include "core/guard.h"

#define MAX_REDIRECTS 256

int pi_attach_driver_tables(void)
{
    int guard = pi_guard_enter(); /* our dlsym must not wrap our own look-ups */
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!driver)
        driver = dlopen("libcuda.so", RTLD_NOW | RTLD_NOLOAD);
    int changed = 0;
    size_t searched = 0;
    uint64_t began = pi_clock_ns(CLOCK_MONOTONIC);
    if (driver) {
        static struct pi_value_redirect redirects[MAX_REDIRECTS];
        size_t count = pi_cuda_driver_redirects(driver, redirects, MAX_REDIRECTS);
        Dl_info owner;
        if (count && dladdr(redirects[0].from, &owner))
            changed = pi_attach_redirect_values(redirects, count, owner.dli_fbase, &searched);
        dlclose(driver);
    }
    pi_guard_restore(guard);
    if (driver)
        pi_diag("attached: %d CUDA driver entry points held by the process redirected "
                "(%.1f MiB of module data searched in %.1f ms)",
                changed, searched / 1048576.0, (pi_clock_ns(CLOCK_MONOTONIC) - began) / 1e6);
    return changed;
}
