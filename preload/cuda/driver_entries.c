/*
 * driver_entries.c - see driver_entries.h.
 */
#include "driver_entries.h"

#include <stdatomic.h>
#include <stddef.h>

#include "cuda_common.h"

#define ENTRY(name, legacy, per_thread, version)                                                  \
    [DRV_##name] = {#name, {legacy, per_thread}, version, {NULL, NULL}, {NULL, NULL}},
struct pi_driver_entry pi_driver_entries[DRV_COUNT] = {DRIVER_ENTRIES(ENTRY)};
#undef ENTRY

void *pi_driver_real_lookup(int id, int flavour)
{
    struct pi_driver_entry *e = &pi_driver_entries[id];
    void *fn = atomic_load_explicit(&e->real[flavour], memory_order_acquire);
    if (fn)
        return fn;
    /* no cuGetProcAddress or dlsym call has handed it to us yet: the driver's own symbol */
    fn = pi_loaded_symbol(e->symbol[flavour] ? e->symbol[flavour] : e->symbol[0]);
    void *expected = NULL;
    if (fn)
        atomic_compare_exchange_strong(&e->real[flavour], &expected, fn);
    return fn;
}
