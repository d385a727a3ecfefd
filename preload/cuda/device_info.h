/*
 * device_info.h - what each device a process uses is (PI_REC_DEVICE): name,
 * compute capability, multiprocessors and clock, read from the driver once
 * per device, so that the analyzer can set achieved throughput against the
 * device's peak.
 */
#ifndef PI_CUDA_DEVICE_INFO_H
#define PI_CUDA_DEVICE_INFO_H

#include <stdint.h>

/* pi_cuda_note_device - write @device's record at @ts if it is the first time while recording */
void pi_cuda_note_device(unsigned device, uint64_t ts);

/* pi_cuda_note_current_device - the same for the calling thread's current device, as long as
 * no device has been written: one load once one has */
void pi_cuda_note_current_device(uint64_t ts);

#endif
