/*
 * device_info.c - one PI_REC_DEVICE per device used (device_info.h), by the
 * driver's attribute queries: a few calls once per device, never again.
 */
#include "device_info.h"

#include <cuda.h>
#include <errno.h>
#include <stdatomic.h>

#include "core/loaded_symbols.h"
#include "core/recorder.h"

/* Devices written so far, by ordinal (those from 64 on share the last bit). */
static _Atomic uint64_t written;

struct driver {
    CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*name)(char *, int, CUdevice);
    CUresult (*current)(CUdevice *);
};

static const struct driver *driver(void)
{
    static struct driver d;
    static _Atomic int looked;
    if (!atomic_load_explicit(&looked, memory_order_acquire)) {
        d.attribute = (CUresult(*)(int *, CUdevice_attribute, CUdevice))pi_loaded_symbol(
            "cuDeviceGetAttribute");
        d.name = (CUresult(*)(char *, int, CUdevice))pi_loaded_symbol("cuDeviceGetName");
        d.current = (CUresult(*)(CUdevice *))pi_loaded_symbol("cuCtxGetDevice");
        atomic_store_explicit(&looked, 1, memory_order_release);
    }
    return &d;
}

/* An attribute of @device, 0 when the driver does not say. */
static unsigned attribute(const struct driver *d, CUdevice_attribute which, CUdevice device)
{
    int value = 0;
    if (!d->attribute || d->attribute(&value, which, device) != CUDA_SUCCESS || value < 0)
        return 0;
    return (unsigned)value;
}

void pi_cuda_note_device(unsigned device, uint64_t ts)
{
    uint64_t bit = 1ull << (device < 63 ? device : 63);
    if (atomic_load_explicit(&written, memory_order_relaxed) & bit)
        return;
    if (!atomic_load_explicit(&pi_recording, memory_order_relaxed))
        return; /* written when a window is open: the record would be dropped now */
    if (atomic_fetch_or(&written, bit) & bit)
        return;
    int saved = errno;
    const struct driver *d = driver();
    CUdevice handle = (CUdevice)device;
    char name[256] = "";
    if (!d->name || d->name(name, (int)sizeof(name), handle) != CUDA_SUCCESS)
        name[0] = '\0';
    name[sizeof(name) - 1] = '\0';
    uint64_t identity = PI_DEVICE_IDENTITY(
        device, attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle),
        attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle));
    uint64_t units = PI_DEVICE_UNITS(attribute(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle),
                                     attribute(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, handle));
    pi_emit(PI_REC_DEVICE, 0, ts, 0, identity, units, name[0] ? pi_intern_cstr(name) : 0);
    errno = saved;
}

void pi_cuda_note_current_device(uint64_t ts)
{
    if (__builtin_expect(atomic_load_explicit(&written, memory_order_relaxed) != 0, 1))
        return;
    const struct driver *d = driver();
    CUdevice device = 0;
    int saved = errno;
    if (d->current && d->current(&device) == CUDA_SUCCESS && device >= 0)
        pi_cuda_note_device((unsigned)device, ts);
    errno = saved;
}
