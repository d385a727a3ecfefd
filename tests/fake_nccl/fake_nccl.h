/*
 * fake_nccl.h - the rule of the fake libnccl.so.2's device work, which the
 * tests compute their expected GPU times from.
 *
 * A collective or point-to-point call outside a group launches one kernel
 * through the fake libcudart (cudaLaunchKernel on the call's stream), named
 * as NCCL 2.19+ names its kernels (ncclDevKernel_AllReduce_Sum_f32_RING_LL);
 * it runs FAKE_NCCL_KERNEL_NS(bytes) on the fake device, bytes being the
 * call's count times the datatype's size. Inside a group the calls are
 * queued and the outermost ncclGroupEnd launches one kernel for all of them,
 * named after the first, running the sum of their durations.
 */
#ifndef FAKE_NCCL_H
#define FAKE_NCCL_H

#define FAKE_NCCL_KERNEL_NS(bytes) (20000ull + (unsigned long long)(bytes) / 10ull)

#endif
