/*
 * fake_device_info.h - what the fake device says it is (cuDeviceGetName,
 * cuDeviceGetAttribute): an H100 SXM-like device unless the environment
 * says otherwise, so that tests can compute its peak throughput themselves.
 *
 *   FAKE_CUDA_DEVICE_NAME       its name
 *   FAKE_CUDA_DEVICE_CC         compute capability, "MAJOR.MINOR"
 *   FAKE_CUDA_DEVICE_SMS        multiprocessors
 *   FAKE_CUDA_DEVICE_CLOCK_KHZ  the largest clock, kHz (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
 */
#ifndef FAKE_DEVICE_INFO_H
#define FAKE_DEVICE_INFO_H

#define FAKE_DEVICE_NAME "NVIDIA H100 80GB HBM3"
#define FAKE_DEVICE_MAJOR 9
#define FAKE_DEVICE_MINOR 0
#define FAKE_DEVICE_SMS 132
#define FAKE_DEVICE_CLOCK_KHZ 1980000 /* what an H100 SXM reports, above its datasheet's 1830 */

#endif
