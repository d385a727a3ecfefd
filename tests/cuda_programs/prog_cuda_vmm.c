/*
 * prog_cuda_vmm: device memory as PyTorch's expandable segments hold it,
 * the driver's virtual memory calls fetched through
 * cudaGetDriverEntryPointByVersion as PyTorch fetches them:
 *
 *   cuMemAddressReserve 64 MiB of address space (no memory behind it)
 *   4 x      cuMemCreate 2 MiB of physical memory, cuMemMap into the
 *            space, cuMemSetAccess
 *   2 x      cuMemUnmap, cuMemRelease (the segment shrinks)
 *   1 x      cuMemCreate 2 MiB, mapped where a released chunk was
 *   beside   cudaMalloc 4 MiB (kept)
 *
 * So physical memory peaks at 8 MiB of chunks + 4 MiB = 12 MiB and ends at
 * 6 + 4 = 10 MiB, in 6 allocations and 2 frees; mapping adds nothing.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

#define MiB (1u << 20)

static void *entry(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult status;
    return cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status) ==
                   cudaSuccess
               ? fn
               : NULL;
}

int main(void)
{
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long) =
        entry("cuMemAddressReserve");
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long) = entry("cuMemCreate");
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                    unsigned long long) = entry("cuMemMap");
    CUresult (*access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t) =
        entry("cuMemSetAccess");
    CUresult (*unmap)(CUdeviceptr, size_t) = entry("cuMemUnmap");
    CUresult (*release)(CUmemGenericAllocationHandle) = entry("cuMemRelease");
    if (!reserve || !create || !map || !access || !unmap || !release)
        return 1;
    int failures = 0;
    void *segment_beside = NULL;
    failures += cudaMalloc(&segment_beside, 4 * MiB) != cudaSuccess;
    CUdeviceptr space = 0;
    failures += reserve(&space, 64 * MiB, 0, 0, 0) != CUDA_SUCCESS;
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemAccessDesc rw = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CUmemGenericAllocationHandle chunks[4];
    for (int i = 0; i < 4; i++) {
        failures += create(&chunks[i], 2 * MiB, &prop, 0) != CUDA_SUCCESS;
        failures += map(space + i * 2 * MiB, 2 * MiB, 0, chunks[i], 0) != CUDA_SUCCESS;
        failures += access(space + i * 2 * MiB, 2 * MiB, &rw, 1) != CUDA_SUCCESS;
    }
    for (int i = 2; i < 4; i++) {
        failures += unmap(space + i * 2 * MiB, 2 * MiB) != CUDA_SUCCESS;
        failures += release(chunks[i]) != CUDA_SUCCESS;
    }
    failures += create(&chunks[2], 2 * MiB, &prop, 0) != CUDA_SUCCESS;
    failures += map(space + 2 * 2 * MiB, 2 * MiB, 0, chunks[2], 0) != CUDA_SUCCESS;
    printf(failures ? "failed\n" : "ok\n");
    return failures;
}
