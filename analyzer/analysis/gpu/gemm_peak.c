/*
 * gemm_peak.c - peak dense throughput per type class (gemm_peak.h) and the
 * type class of a product (gemm.h).
 *
 * Figures are NVIDIA's datasheets, dense (no sparsity): H100 SXM5 and H200
 * (sm_90, 132 SMs) 989.4 TFLOP/s bf16 and fp16, 494.7 tf32, 1978.9 fp8,
 * 66.9 fp32 (no tensor cores); H100 PCIe (sm_90, 114 SMs) 756 bf16 and
 * fp16, 378 tf32, 1513 fp8, 51 fp32; A100 (sm_80, 108 SMs) 312 bf16 and
 * fp16, 156 tf32, 19.5 fp32. The tensor figures are FLOPs per clock per SM
 * (4096 bf16 on sm_90, 2048 on sm_80) × SMs × the boost clock the sheet
 * assumes (1.83 GHz for the H100 SXM5, which reports 1.98 GHz as its
 * largest clock), so the datasheet is preferred where the device is one of
 * them; another SM count of a known architecture is computed from the clock
 * it reports.
 */
#include "gemm_peak.h"

#include <string.h>

#include "gemm.h"

/* cudaDataType_t and cublasComputeType_t values (library_types.h, cublas_api.h): the
 * analyzer does not include CUDA's headers. */
enum {
    R_32F = 0, R_64F = 1, R_16F = 2, R_8I = 3, R_16BF = 14, R_8F_E4M3 = 28, R_8F_E5M2 = 29,
    COMPUTE_32F_FAST_16F = 74, COMPUTE_32F_FAST_16BF = 75, COMPUTE_32F_FAST_TF32 = 77,
};

const char *pi_gemm_dtype(unsigned a_type, unsigned compute)
{
    switch (a_type) {
    case R_16BF: return "bf16";
    case R_16F: return "fp16";
    case R_8F_E4M3:
    case R_8F_E5M2: return "fp8";
    case R_8I: return "int8";
    case R_64F: return "fp64";
    case R_32F:
        /* fp32 matrices run on tensor cores when the compute type allows it */
        return compute == COMPUTE_32F_FAST_TF32   ? "tf32"
               : compute == COMPUTE_32F_FAST_16BF ? "bf16"
               : compute == COMPUTE_32F_FAST_16F  ? "fp16"
                                                  : "fp32";
    default: return "other";
    }
}

enum { BF16, FP16, TF32, FP8, FP32, CLASSES };
static const char *const class_names[CLASSES] = {"bf16", "fp16", "tf32", "fp8", "fp32"};

/* Datasheet figures, TFLOP/s; 0: the product has no such figure. */
static const struct {
    unsigned major, minor, sms;
    const char *product;
    double tflops[CLASSES];
} datasheets[] = {
    {9, 0, 132, "H100 SXM5 / H200", {989.4, 989.4, 494.7, 1978.9, 66.9}},
    {9, 0, 114, "H100 PCIe", {756, 756, 378, 1513, 51}},
    {8, 0, 108, "A100", {312, 312, 156, 0, 19.5}},
};

/* FLOPs per clock per SM of each architecture, dense. */
static const struct {
    unsigned major, minor;
    double per_clock[CLASSES];
} architectures[] = {
    {9, 0, {4096, 4096, 2048, 8192, 256}},
    {8, 0, {2048, 2048, 1024, 0, 128}},
};

static int class_of(const char *dtype)
{
    for (int c = 0; c < CLASSES; c++)
        if (dtype && strcmp(dtype, class_names[c]) == 0)
            return c;
    return -1;
}

int pi_gemm_peak(const struct pi_device_info *d, const char *dtype, struct pi_gemm_peak *peak)
{
    int c = class_of(dtype);
    if (c < 0 || !d)
        return -1;
    for (size_t i = 0; i < sizeof(datasheets) / sizeof(datasheets[0]); i++)
        if (datasheets[i].major == d->major && datasheets[i].minor == d->minor &&
            datasheets[i].sms == d->sms) {
            if (datasheets[i].tflops[c] <= 0)
                return -1;
            *peak = (struct pi_gemm_peak){datasheets[i].tflops[c], PI_PEAK_DATASHEET,
                                          datasheets[i].product};
            return 0;
        }
    for (size_t i = 0; i < sizeof(architectures) / sizeof(architectures[0]); i++)
        if (architectures[i].major == d->major && architectures[i].minor == d->minor) {
            double per_clock = architectures[i].per_clock[c];
            if (per_clock <= 0 || d->sms == 0 || d->clock_khz == 0)
                return -1;
            *peak = (struct pi_gemm_peak){per_clock * d->sms * d->clock_khz * 1e3 / 1e12,
                                          PI_PEAK_COMPUTED, NULL};
            return 0;
        }
    return -1;
}
