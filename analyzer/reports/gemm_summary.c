/* gemm_summary.c - the trace's matrix products for the reports (see gemm_summary.h). */
#include "gemm_summary.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/host/steps.h"
#include "analysis/pass/training_process.h"

/* Each process's shapes into the summary's, same shape and type merged. */
static int merge_shapes(struct pi_gemm_summary *s, const struct pi_gemm *g, size_t *capacity)
{
    for (size_t i = 0; i < g->shape_count; i++) {
        const struct pi_gemm_shape *x = &g->shapes[i];
        size_t j;
        for (j = 0; j < s->shape_count; j++) {
            struct pi_gemm_shape *y = &s->shapes[j];
            if (y->m == x->m && y->n == x->n && y->k == x->k && y->batch == x->batch &&
                strcmp(y->dtype, x->dtype) == 0)
                break;
        }
        if (j == s->shape_count) {
            if (pi_array_room(&s->shapes, capacity, s->shape_count, sizeof(*s->shapes), 16))
                return -1;
            s->shapes[s->shape_count++] = *x;
            continue;
        }
        s->shapes[j].calls += x->calls;
        s->shapes[j].kernels += x->kernels;
        s->shapes[j].flops += x->flops;
        s->shapes[j].gpu_ns += x->gpu_ns;
    }
    return 0;
}

static int by_flops(const void *a, const void *b)
{
    const struct pi_gemm_shape *x = a, *y = b;
    if (x->flops != y->flops)
        return x->flops > y->flops ? -1 : 1;
    return x->gpu_ns > y->gpu_ns ? -1 : x->gpu_ns < y->gpu_ns;
}

/* The type class of the most FLOPs, with its FLOPs and GPU time. */
static void dominant_dtype(struct pi_gemm_summary *s)
{
    for (size_t i = 0; i < s->shape_count; i++) {
        const char *dtype = s->shapes[i].dtype;
        double flops = 0;
        uint64_t gpu_ns = 0;
        for (size_t j = 0; j < s->shape_count; j++)
            if (strcmp(s->shapes[j].dtype, dtype) == 0) {
                flops += (double)s->shapes[j].flops;
                gpu_ns += s->shapes[j].gpu_ns;
            }
        if (!s->dtype || flops > s->dtype_flops) {
            s->dtype = dtype;
            s->dtype_flops = flops;
            s->dtype_gpu_ns = gpu_ns;
        }
    }
}

/* The training process's steady steps: their FLOPs and time, and the MFU against the peak. */
static void per_step(struct pi_gemm_summary *s, const struct pi_process_info *p)
{
    s->mfu = -1;
    const struct pi_steps *steps = p ? &p->steps : NULL;
    if (!steps || !p->gemm || pi_steps_steady_count(steps) == 0)
        return;
    double flops = 0;
    for (uint64_t i = steps->warmup; i < steps->count; i++)
        if (pi_steps_steady(steps, i))
            flops += pi_gemm_flops_between(p, pi_steps_start_ns(steps, i),
                                           pi_steps_end_ns(steps, i));
    s->steady_steps = pi_steps_steady_count(steps);
    s->flops_per_step = flops / (double)s->steady_steps;
    s->steady_ns = steps->steady_total_ns;
    if (s->has_peak && s->steady_ns)
        s->mfu = flops / (double)s->steady_ns * 1e9 / (s->peak.tflops_per_s * 1e12);
}

int pi_gemm_summarise(const struct pi_analysis *a, struct pi_gemm_summary *s)
{
    memset(s, 0, sizeof(*s));
    s->mfu = -1;
    size_t capacity = 0;
    int any = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_gemm *g = a->processes[i].gemm;
        if (!g)
            continue;
        any = 1;
        s->calls += g->calls;
        s->failed += g->failed;
        s->untimed_kernels += g->untimed_kernels;
        s->flops += g->flops;
        s->gpu_ns += g->gpu_ns;
        for (size_t k = 0; k < g->kernel_count; k++)
            s->kernels += g->kernels[k].kernels;
        if (merge_shapes(s, g, &capacity) != 0) {
            pi_gemm_summary_free(s);
            return -1;
        }
    }
    if (!any)
        return 0;
    qsort(s->shapes, s->shape_count, sizeof(*s->shapes), by_flops);
    dominant_dtype(s);
    const struct pi_process_info *training = pi_training_process(a);
    for (size_t i = 0; !training && i < a->process_count; i++)
        if (a->processes[i].gemm)
            training = &a->processes[i];
    if (training && training->device_count)
        s->device = &training->devices[0];
    for (size_t i = 0; !s->device && i < a->process_count; i++)
        if (a->processes[i].device_count)
            s->device = &a->processes[i].devices[0];
    s->has_peak = s->device && s->dtype && pi_gemm_peak(s->device, s->dtype, &s->peak) == 0;
    per_step(s, training);
    return 1;
}

void pi_gemm_summary_free(struct pi_gemm_summary *s)
{
    free(s->shapes);
    memset(s, 0, sizeof(*s));
}
