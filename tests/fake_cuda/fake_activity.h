/*
 * fake_activity.h - what the fake driver tells a fake CUPTI, as the real
 * driver tells the real one: each API call as it begins and ends (domain
 * and callback id from cupti_driver_cbid.h / cupti_runtime_cbid.h), and
 * the GPU work that call queued, with its device start and end.
 *
 * The fake runtime reports its own calls through the driver
 * (fake_cuda_api_enter/exit), so one table decides whether anyone listens.
 * A driver call made inside a runtime call is part of that runtime call:
 * the GPU work it queues carries the runtime call's correlation id and it
 * is no API record of its own (the real runtime reaches the driver through
 * internal entries that CUPTI does not report as driver API calls).
 */
#ifndef FAKE_ACTIVITY_H
#define FAKE_ACTIVITY_H

#include <stdint.h>

enum fake_work { FAKE_WORK_KERNEL, FAKE_WORK_COPY, FAKE_WORK_SET };

/* API domains, as CUpti_CallbackDomain numbers them */
enum { FAKE_DOMAIN_DRIVER = 1, FAKE_DOMAIN_RUNTIME = 2 };

struct fake_activity_sink {
    void (*api_enter)(int domain, int cbid);
    void (*api_exit)(int domain, int cbid);
    /* @start_ns, @end_ns: CLOCK_MONOTONIC, when the device runs it */
    void (*gpu_work)(enum fake_work kind, uint64_t start_ns, uint64_t end_ns, const char *name,
                     uintptr_t stream);
};

/* Exported by the fake libcuda.so.1. */
typedef void (*fake_set_sink_fn)(const struct fake_activity_sink *sink);
typedef void (*fake_api_fn)(int domain, int cbid);

#endif
