/*
 * driver_entries.h - the driver entry points profinject wraps. One table
 * says, per entry, its base name (as cuGetProcAddress is asked for it),
 * its legacy and per-thread-default-stream symbols, and the oldest CUDA
 * version whose ABI matches our wrapper; beside it, where the real
 * function of each flavour is. The wrappers are in driver_memory_hooks.c
 * and driver_launch_hooks.c; entry_points.c hands them out.
 */
#ifndef PI_DRIVER_ENTRIES_H
#define PI_DRIVER_ENTRIES_H

#include <stdatomic.h>
#include <stddef.h>

/* name, legacy symbol, per-thread symbol (NULL: none), oldest version with this ABI */
#define DRIVER_ENTRIES(X)                                                                         \
    X(cuMemAlloc, "cuMemAlloc_v2", NULL, 3020)                                                    \
    X(cuMemFree, "cuMemFree_v2", NULL, 3020)                                                      \
    X(cuMemAllocAsync, "cuMemAllocAsync", "cuMemAllocAsync_ptsz", 11020)                          \
    X(cuMemFreeAsync, "cuMemFreeAsync", "cuMemFreeAsync_ptsz", 11020)                             \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", 11020)  \
    X(cuMemAllocManaged, "cuMemAllocManaged", NULL, 6000)                                         \
    X(cuMemAllocHost, "cuMemAllocHost_v2", NULL, 3020)                                            \
    X(cuMemHostAlloc, "cuMemHostAlloc", NULL, 2020)                                               \
    X(cuMemFreeHost, "cuMemFreeHost", NULL, 2000)                                                 \
    X(cuMemHostRegister, "cuMemHostRegister_v2", NULL, 6050)                                      \
    X(cuMemCreate, "cuMemCreate", NULL, 10020)                                                    \
    X(cuMemRelease, "cuMemRelease", NULL, 10020)                                                  \
    X(cuMemMap, "cuMemMap", NULL, 10020)                                                          \
    X(cuMemUnmap, "cuMemUnmap", NULL, 10020)                                                      \
    X(cuMemcpy, "cuMemcpy", "cuMemcpy_ptds", 4000)                                                \
    X(cuMemcpyAsync, "cuMemcpyAsync", "cuMemcpyAsync_ptsz", 4000)                                 \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", 3020)                              \
    X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds", 3020)                              \
    X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", "cuMemcpyDtoD_v2_ptds", 3020)                              \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz", 3020)               \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync_v2_ptsz", 3020)               \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync_v2_ptsz", 3020)               \
    X(cuLaunchKernel, "cuLaunchKernel", "cuLaunchKernel_ptsz", 4000)                              \
    X(cuLaunchKernelEx, "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz", 11060)                       \
    X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz",   \
      9000)                                                                                       \
    X(cuGraphLaunch, "cuGraphLaunch", "cuGraphLaunch_ptsz", 10000)                                \
    X(cuStreamSynchronize, "cuStreamSynchronize", "cuStreamSynchronize_ptsz", 2000)               \
    X(cuCtxSynchronize, "cuCtxSynchronize", NULL, 2000)                                           \
    X(cuEventSynchronize, "cuEventSynchronize", NULL, 2000)                                       \
    X(cuModuleGetFunction, "cuModuleGetFunction", NULL, 2000)                                     \
    X(cuLibraryGetKernel, "cuLibraryGetKernel", NULL, 12000)

#define ENTRY_ID(name, legacy, per_thread, version) DRV_##name,
enum { DRIVER_ENTRIES(ENTRY_ID) DRV_COUNT };
#undef ENTRY_ID

struct pi_driver_entry {
    const char *name;
    const char *symbol[2];  /* [0] legacy, [1] per-thread default stream */
    int min_version;
    void *wrapper[2];       /* ours, filled by pi_driver_entries_ready */
    void *_Atomic real[2];  /* what the wrapper calls */
};

/* Indexed by DRV_ id. Names, symbols and versions are constant. */
extern struct pi_driver_entry pi_driver_entries[DRV_COUNT];

/* pi_driver_real when nothing has handed the entry to us yet: the driver's own symbol */
void *pi_driver_real_lookup(int id, int flavour);

/**
 * pi_driver_real - the real function of entry @id, flavour @flavour
 * (0 legacy, 1 per-thread default stream): the one cuGetProcAddress or
 * dlsym handed us, else the driver's own symbol
 * Return: the function, or NULL when no driver is loaded.
 */
static inline void *pi_driver_real(int id, int flavour)
{
    void *fn = atomic_load_explicit(&pi_driver_entries[id].real[flavour], memory_order_acquire);
    return __builtin_expect(fn != NULL, 1) ? fn : pi_driver_real_lookup(id, flavour);
}

/* Each group of wrappers puts its own addresses in the table (entry_points.c calls these once). */
void pi_driver_memory_wrappers(struct pi_driver_entry *entries);
void pi_driver_launch_wrappers(struct pi_driver_entry *entries);

#endif
