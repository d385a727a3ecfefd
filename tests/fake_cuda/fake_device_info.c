/*
 * fake_device_info.c - the fake device's name and attributes
 * (fake_device_info.h), from the environment or the H100-like defaults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_device_info.h"
#include "fake_driver.h"

static int env_int(const char *name, int otherwise)
{
    const char *text = getenv(name);
    return text && *text ? atoi(text) : otherwise;
}

static CUresult device_name(char *name, int length, CUdevice device)
{
    if (device != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!name || length <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    const char *text = getenv("FAKE_CUDA_DEVICE_NAME");
    snprintf(name, (size_t)length, "%s", text && *text ? text : FAKE_DEVICE_NAME);
    return CUDA_SUCCESS;
}

static CUresult device_attribute(int *value, CUdevice_attribute attribute, CUdevice device)
{
    if (device != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    int major = FAKE_DEVICE_MAJOR, minor = FAKE_DEVICE_MINOR;
    const char *cc = getenv("FAKE_CUDA_DEVICE_CC");
    if (cc && *cc && sscanf(cc, "%d.%d", &major, &minor) != 2)
        major = FAKE_DEVICE_MAJOR, minor = FAKE_DEVICE_MINOR;
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *value = major;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *value = minor;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *value = env_int("FAKE_CUDA_DEVICE_SMS", FAKE_DEVICE_SMS);
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
        *value = env_int("FAKE_CUDA_DEVICE_CLOCK_KHZ", FAKE_DEVICE_CLOCK_KHZ);
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int length, CUdevice device)
{
    return device_name(name, length, device);
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                             CUdevice device)
{
    return device_attribute(value, attribute, device);
}

#define E(name, version, fn) {name, version, (void *)(fn), NULL}
const struct fake_entry fake_device_info_entries[] = {
    E("cuDeviceGetName", 2000, device_name),
    E("cuDeviceGetAttribute", 2000, device_attribute),
    {NULL, 0, NULL, NULL},
};
#undef E
