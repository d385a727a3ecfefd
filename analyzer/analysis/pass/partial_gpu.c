/* partial_gpu.c - a process's GPU figures in a partial file: device memory, busy time,
 * NCCL collectives, cuBLAS products (see partial_parts.h). */
#include "partial_parts.h"

#include <stdlib.h>

#include "analysis/gpu/collectives.h"
#include "analysis/gpu/gemm.h"
#include "analysis/gpu/gpu_analysis.h"
#include "analysis/gpu/gpu_timeline.h"
#include "analysis/gpu/gpu_timing.h"
#include "analysis/pass/partial_values.h"

static void site_bytes(struct pi_codec *c, struct pi_site_bytes *s)
{
    pi_codec_u32(c, &s->stack);
    pi_codec_str(c, &s->text);
    pi_codec_u64(c, &s->bytes);
    pi_codec_u64(c, &s->count);
    pi_partial_call_site(c, &s->site);
}

void pi_partial_gpu_memory(struct pi_codec *c, struct pi_gpu_memory **memory)
{
    if (!PRESENT(c, *memory))
        return;
    struct pi_gpu_memory *m = *memory;
    pi_codec_u64(c, &m->live);
    pi_codec_u64(c, &m->peak);
    pi_codec_u64(c, &m->peak_ns);
    COUNT_OF(c, m->failure_count, PI_MAX_DEVICE_FAILURES);
    for (unsigned i = 0; i < m->failure_count; i++) {
        struct pi_device_failure *f = &m->failures[i];
        pi_codec_u64(c, &f->ns);
        pi_codec_u64(c, &f->bytes);
        pi_codec_u64(c, &f->held_bytes);
        pi_codec_u32(c, &f->tid);
        site_bytes(c, &f->site);
        pi_codec_int(c, &f->has_device_memory);
        pi_codec_u64(c, &f->free_bytes);
        pi_codec_u64(c, &f->total_bytes);
        pi_codec_int(c, &f->in_order);
        pi_codec_int(c, &f->retried);
        pi_codec_int(c, &f->retry_failed);
        pi_codec_u64(c, &f->freed_before_retry);
    }
    pi_codec_u64(c, &m->failures_total);
    U64S(c, m->device_live);
    U64S(c, m->device_peak);
    COUNT_OF(c, m->devices_seen, PI_MAX_DEVICES); /* the reports index the arrays above by it */
    pi_codec_u64(c, &m->pinned_live);
    pi_codec_u64(c, &m->pinned_peak);
    pi_codec_u64(c, &m->allocations);
    pi_codec_u64(c, &m->frees);
    pi_codec_u64(c, &m->allocated_bytes);
    pi_codec_u64(c, &m->live_at_window_start);
    COUNT_OF(c, m->pool_count, PI_MAX_POOLS);
    for (unsigned i = 0; i < m->pool_count; i++) {
        pi_codec_u64(c, &m->pools[i].pool);
        pi_codec_u64(c, &m->pools[i].reserved);
        pi_codec_u64(c, &m->pools[i].high);
        pi_codec_u64(c, &m->pools[i].read_at_ns);
    }
    pi_codec_u64(c, &m->pool_reserved_peak);
    pi_codec_u64(c, &m->pool_reserved_end);
    pi_partial_series(c, &m->series);
    COUNT_OF(c, m->at_peak_count, PI_TOP_SITES);
    for (int i = 0; i < m->at_peak_count; i++)
        site_bytes(c, &m->at_peak[i]);
    for (size_t i = 0, n = ARRAY(c, m->leaks, m->leak_count); i < n; i++)
        site_bytes(c, &m->leaks[i]);
    pi_codec_u64(c, &m->grown_since_ns);
    for (size_t i = 0, n = ARRAY(c, m->grown, m->grown_count); i < n; i++)
        site_bytes(c, &m->grown[i]);
    for (size_t i = 0, n = ARRAY(c, m->changes, m->change_count); i < n; i++) {
        pi_codec_u64(c, &m->changes[i].ts_ns);
        pi_codec_u64(c, &m->changes[i].live);
    }
    if (c->reading)
        m->change_capacity = m->change_count;
    pi_codec_int(c, &m->keep_changes);
    /* the file's GPU timing records, played into the job's choice at the commit */
    for (size_t i = 0, n = ARRAY(c, m->timing_notes, m->timing_note_count); i < n; i++) {
        pi_codec_int(c, &m->timing_notes[i].source);
        pi_codec_str(c, &m->timing_notes[i].reason);
        if (c->reading && !m->timing_notes[i].reason && !c->failed)
            pi_codec_fail(c, "a GPU timing note without its reason");
    }
    if (c->reading)
        m->timing_note_capacity = m->timing_note_count;
}

void pi_partial_gpu_timeline(struct pi_codec *c, struct pi_gpu_timeline **timeline)
{
    if (!PRESENT(c, *timeline))
        return;
    struct pi_gpu_timeline *t = *timeline;
    pi_codec_u64(c, &t->origin_ns);
    pi_codec_u64(c, &t->bucket_ns);
    /* the timeline divides by its bucket, which only ever doubles up to 2^50 ns */
    if (c->reading && (t->bucket_ns == 0 || t->bucket_ns > (1ull << 51)))
        pi_codec_fail(c, "a GPU timeline bucket out of range");
    U64S(c, t->busy);
    pi_codec_u64(c, &t->durations);
    pi_codec_u64(c, &t->first_gpu_ns);
    pi_codec_u64(c, &t->last_gpu_ns);
    pi_codec_u64(c, &t->launches);
    pi_codec_u64(c, &t->first_launch_ns);
    pi_codec_u64(c, &t->last_launch_ns);
}

void pi_partial_collectives(struct pi_codec *c, struct pi_collectives **collectives_of)
{
    if (!PRESENT(c, *collectives_of))
        return;
    struct pi_collectives *k = *collectives_of;
    for (size_t i = 0, n = ARRAY(c, k->rows, k->row_count); i < n; i++) {
        struct pi_collective_row *r = &k->rows[i];
        pi_codec_uint(c, &r->func);
        pi_codec_uint(c, &r->datatype);
        pi_codec_u64(c, &r->bucket);
        pi_codec_u64(c, &r->calls);
        pi_codec_u64(c, &r->failed);
        pi_codec_u64(c, &r->kernels);
        pi_codec_u64(c, &r->bytes);
        pi_codec_double(c, &r->bus_bytes);
        pi_codec_u64(c, &r->host_ns);
        pi_codec_u64(c, &r->gpu_ns);
    }
    for (size_t i = 0, n = ARRAY(c, k->comms, k->comm_count); i < n; i++) {
        struct pi_nccl_communicator *m = &k->comms[i];
        pi_codec_u64(c, &m->handle);
        pi_codec_u64(c, &m->hash);
        pi_codec_int(c, &m->rank);
        pi_codec_int(c, &m->nranks);
        pi_codec_uint(c, &m->op);
        pi_codec_int(c, &m->failed);
        pi_codec_u64(c, &m->at_ns);
        pi_codec_u64(c, &m->init_ns);
        pi_codec_uint(c, &m->end_op);
        pi_codec_u64(c, &m->calls);
        pi_codec_uint(c, &m->last_func);
    }
    for (size_t i = 0, n = ARRAY(c, k->outside, k->outside_count); i < n; i++) {
        pi_codec_text(c, &k->outside[i].name);
        pi_codec_u64(c, &k->outside[i].kernels);
        pi_codec_u64(c, &k->outside[i].gpu_ns);
    }
    if (c->reading) {
        k->row_capacity = k->row_count;
        k->comm_capacity = k->comm_count;
        k->outside_capacity = k->outside_count;
    }
    pi_codec_u64(c, &k->calls);
    pi_codec_u64(c, &k->failed);
    pi_codec_u64(c, &k->bytes);
    pi_codec_u64(c, &k->host_ns);
    pi_codec_u64(c, &k->gpu_ns);
    pi_codec_u64(c, &k->outside_gpu_ns);
}

void pi_partial_gemm(struct pi_codec *c, struct pi_gemm **gemm_of)
{
    if (!PRESENT(c, *gemm_of))
        return;
    struct pi_gemm *g = *gemm_of;
    for (size_t i = 0, n = ARRAY(c, g->shapes, g->shape_count); i < n; i++) {
        struct pi_gemm_shape *s = &g->shapes[i];
        pi_codec_u32(c, &s->m);
        pi_codec_u32(c, &s->n);
        pi_codec_u32(c, &s->k);
        pi_codec_u32(c, &s->batch);
        pi_codec_interned(c, &s->dtype);
        if (c->reading && !c->failed && !s->dtype) /* always one of pi_gemm_dtype's */
            pi_codec_fail(c, "a matrix product shape without its type");
        pi_codec_u64(c, &s->calls);
        pi_codec_u64(c, &s->kernels);
        pi_codec_u64(c, &s->flops);
        pi_codec_u64(c, &s->gpu_ns);
    }
    for (size_t i = 0, n = ARRAY(c, g->kernels, g->kernel_count); i < n; i++) {
        pi_codec_text(c, &g->kernels[i].name);
        pi_codec_double(c, &g->kernels[i].flops);
        pi_codec_u64(c, &g->kernels[i].kernels);
        pi_codec_u64(c, &g->kernels[i].gpu_ns);
    }
    for (size_t i = 0, n = ARRAY(c, g->moments, g->moment_count); i < n; i++) {
        pi_codec_u64(c, &g->moments[i].ns);
        pi_codec_u64(c, &g->moments[i].flops);
    }
    if (c->reading) {
        g->shape_capacity = g->shape_count;
        g->kernel_capacity = g->kernel_count;
        g->moment_capacity = g->moment_count;
    }
    pi_codec_u64(c, &g->calls);
    pi_codec_u64(c, &g->failed);
    pi_codec_u64(c, &g->untimed_kernels);
    pi_codec_double(c, &g->flops);
    pi_codec_u64(c, &g->gpu_ns);
}
