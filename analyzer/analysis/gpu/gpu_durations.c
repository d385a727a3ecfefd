/*
 * gpu_durations.c - GPU durations matched to the launch or copy they
 * belong to, by correlation id. The two come from different threads (or
 * CUPTI's buffers), so either may be read first.
 */
#include "gpu_durations.h"
#include "collectives.h"

#include "analysis/sites/demangle.h"
#include "analysis/common/u64_map.h"

/* Per correlation id: the GPU-time entry it belongs to and its launch's
 * host time; or, for a GPU time that arrived before its launch, that time. */
enum { CORR_ENTRY = 0, CORR_LAUNCH_NS = 1, CORR_EARLY_TIME = 1, CORR_HAS_EARLY = 2 };

static void add(struct pi_latency_entry *e, uint64_t ns)
{
    if (e)
        pi_histogram_add(&e->durations, ns);
}

/* A launch or copy whose GPU time may come: remember where it goes. */
void pi_gpu_durations_expect(struct pi_analysis *a, struct pi_process_info *p, uint64_t corr,
                             struct pi_latency_entry *gpu_entry, uint64_t launch_ns)
{
    struct pi_gpu_memory *m = p->gpu;
    struct pi_u64_entry *c = pi_u64_map_put(m->correlations, corr ? corr : 1);
    if (!c)
        return;
    if (c->value[CORR_HAS_EARLY]) {
        add(gpu_entry, c->value[CORR_EARLY_TIME]);
        a->gpu.gpu_busy_ns += c->value[CORR_EARLY_TIME];
        p->gpu_busy_ns += c->value[CORR_EARLY_TIME];
        pi_u64_map_remove(m->correlations, corr ? corr : 1);
        return;
    }
    c->value[CORR_ENTRY] = (uint64_t)(uintptr_t)gpu_entry;
    c->value[CORR_LAUNCH_NS] = launch_ns;
}

/* GPU time for the kernel named @name, by its name as the GPU ran it. */
static void gpu_time_by_name(struct pi_analysis *a, struct pi_process_info *p,
                             const struct pi_reader *reader, uint64_t name_id, uint64_t dur_ns)
{
    const char *kernel = pi_reader_string(reader, name_id);
    char name[1024];
    pi_demangle(kernel ? kernel : "(unknown kernel)", name, sizeof(name));
    add(pi_latency_get(&a->calls, "gpu", name, "kernel"), dur_ns);
    a->gpu.gpu_busy_ns += dur_ns;
    p->gpu_busy_ns += dur_ns;
}

uint64_t pi_gpu_durations_time(struct pi_analysis *a, struct pi_process_info *p,
                               const struct pi_reader *reader, const struct pi_event *ev,
                               int *collective)
{
    *collective = 0;
    struct pi_gpu_memory *m = p->gpu;
    uint64_t corr = ev->rec.arg[0] ? ev->rec.arg[0] : 1;
    struct pi_u64_entry *c = pi_u64_map_get(m->correlations, corr);
    uint64_t launched = c && c->value[CORR_ENTRY] ? c->value[CORR_LAUNCH_NS] : 0;
    /* one kernel of a graph launch: the GPU's own name says which (CUPTI) */
    if ((ev->rec.flags & PI_GPU_TIME_PART) && ev->rec.arg[2]) {
        *collective = pi_is_nccl_kernel(pi_reader_string(reader, ev->rec.arg[2]));
        gpu_time_by_name(a, p, reader, ev->rec.arg[2], ev->dur_ns);
        return launched;
    }
    if (c && c->value[CORR_ENTRY]) {
        struct pi_latency_entry *entry = (struct pi_latency_entry *)(uintptr_t)c->value[CORR_ENTRY];
        *collective = pi_is_nccl_kernel(entry->name);
        add(entry, ev->dur_ns);
        a->gpu.gpu_busy_ns += ev->dur_ns;
        p->gpu_busy_ns += ev->dur_ns;
        if (!(ev->rec.flags & PI_GPU_TIME_PART))
            pi_u64_map_remove(m->correlations, corr);
    } else if ((c = pi_u64_map_put(m->correlations, corr)) != NULL) {
        c->value[CORR_EARLY_TIME] = ev->dur_ns;
        c->value[CORR_HAS_EARLY] = 1;
    }
    return launched;
}
