/*
 * fake_driver.h - the parts of the fake libcuda.so.1 (fake_driver.c: set-up,
 * the activity hooks and resolution; fake_memory.c; fake_launch.c).
 *
 * Every entry point has a hidden implementation; the exported symbol is a
 * thin wrapper around it, and cuGetProcAddress hands out the implementation.
 * So the library never calls its own exported names through the PLT (which
 * a preloaded object would intercept), as the real driver does not.
 */
#ifndef FAKE_DRIVER_H
#define FAKE_DRIVER_H

#include <cuda.h>
#include <stdint.h>

#include "fake_activity.h"

#define EXPORT __attribute__((visibility("default")))

/* The activity hooks (fake_driver.c): API calls and their GPU work. */
void fake_api_enter(int domain, int cbid);
void fake_api_exit(int domain, int cbid);
void fake_gpu_work(enum fake_work kind, uint64_t start_ns, uint64_t end_ns, const char *name,
                   CUstream stream);

/* One driver API call of callback id @cbid around @body. */
#define DRIVER_CALL(cbid, body)                                                                   \
    do {                                                                                          \
        fake_api_enter(FAKE_DOMAIN_DRIVER, cbid);                                                 \
        CUresult fake_result_ = body;                                                             \
        fake_api_exit(FAKE_DOMAIN_DRIVER, cbid);                                                  \
        return fake_result_;                                                                      \
    } while (0)

struct fake_entry {
    const char *name;
    int version;      /* the lowest version this entry point answers for */
    void *function;   /* legacy default stream */
    void *per_thread; /* the _ptsz/_ptds flavour, NULL when there is none */
};

/* The entries of each part, ended by a NULL name. */
extern const struct fake_entry fake_memory_entries[];
extern const struct fake_entry fake_launch_entries[];
extern const struct fake_entry fake_device_info_entries[];

#endif
