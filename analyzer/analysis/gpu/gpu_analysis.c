/*
 * gpu_analysis.c - CUDA records into memory, latency and GPU-time figures
 * (see gpu_analysis.h). Records marked nested repeat a runtime call that
 * is recorded itself: they count in the per-call latency table only.
 */
#include "gpu_analysis.h"
#include "device_failures.h"
#include "site_bytes.h"
#include "collectives.h"
#include "gemm.h"
#include "analysis/gpu/gpu_durations.h"
#include "analysis/gpu/gpu_timeline.h"
#include "analysis/gpu/gpu_timing.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/sites/call_sites.h"
#include "analysis/sites/demangle.h"
#include "analysis/sites/python_sites.h"
#include "analysis/common/u64_map.h"

static struct pi_gpu_memory *memory_of(struct pi_process_info *p)
{
    if (!p->gpu) {
        p->gpu = calloc(1, sizeof(*p->gpu));
        if (p->gpu) {
            p->gpu->live_map = pi_u64_map_new();
            p->gpu->site_map = pi_u64_map_new();
            p->gpu->correlations = pi_u64_map_new();
            pi_memory_order_init(&p->gpu->order, p->header.flush_interval_ns);
        }
    }
    return p->gpu && p->gpu->live_map && p->gpu->site_map && p->gpu->correlations ? p->gpu : NULL;
}

const char *pi_cuda_level_name(uint16_t flags)
{
    return (flags & PI_CUDA_NESTED)   ? "driver in runtime"
           : (flags & PI_CUDA_DRIVER) ? "driver"
                                      : "runtime";
}

const char *pi_copy_size_class(uint64_t bytes)
{
    return bytes < (64u << 10) ? "<64KiB" : bytes < (1u << 20) ? "64KiB-1MiB"
                                          : bytes < (16u << 20) ? "1-16MiB"
                                                                : ">=16MiB";
}

static void add(struct pi_latency_entry *e, uint64_t ns, uint64_t bytes)
{
    if (e) {
        pi_histogram_add(&e->durations, ns);
        e->bytes += bytes;
    }
}


/* value[1] of a live allocation: kind, device and (to match a later
 * PI_REC_CALL_SITE with it) the low 48 bits of its start */
#define LIVE_INFO(kind, device, ts) ((kind) | (uint64_t)(device) << 8 | ((ts) & 0xffffffffffffull) << 16)
#define LIVE_KIND(info) ((unsigned)((info) & 0xff))
#define LIVE_DEVICE(info) ((unsigned)(((info) >> 8) & 0xff))
#define LIVE_TS(info) ((info) >> 16)

static int by_bytes(const void *a, const void *b)
{
    const struct pi_site_bytes *x = a, *y = b;
    return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

/* Device bytes now, for a timeline that asked for them. */
static void changed(struct pi_gpu_memory *m, uint64_t ts_ns)
{
    pi_series_add(&m->series, ts_ns, m->live);
    if (!m->keep_changes)
        return;
    if (m->change_count == m->change_capacity) {
        size_t capacity = m->change_capacity ? 2 * m->change_capacity : 256;
        struct pi_memory_change *grown = realloc(m->changes, capacity * sizeof(*grown));
        if (!grown)
            return;
        m->changes = grown;
        m->change_capacity = capacity;
    }
    m->changes[m->change_count++] = (struct pi_memory_change){ts_ns, m->live};
}

const struct pi_memory_change *pi_gpu_take_changes(struct pi_gpu_memory *m, size_t *count)
{
    *count = m->change_count;
    m->change_count = 0;
    return *count ? m->changes : NULL;
}

/* The biggest call sites of what is live now: the picture at a new peak. */
static void snapshot_sites(struct pi_gpu_memory *m, const struct pi_reader *reader)
{
    struct pi_u64_map *sites = m->site_map;
    struct pi_site_bytes top[PI_TOP_SITES + 1];
    int n = 0;
    for (size_t i = 0; i < sites->capacity; i++) {
        struct pi_u64_entry *e = &sites->slots[i];
        if (!e->key || !e->value[0])
            continue;
        top[n] = (struct pi_site_bytes){(uint32_t)(e->key - 1), NULL, e->value[0], e->value[1],
                                        NULL};
        for (int k = n; k > 0 && top[k].bytes > top[k - 1].bytes; k--) {
            struct pi_site_bytes t = top[k];
            top[k] = top[k - 1];
            top[k - 1] = t;
        }
        if (n < PI_TOP_SITES)
            n++;
    }
    for (int i = 0; i < m->at_peak_count; i++)
        pi_site_free(&m->at_peak[i]);
    for (int i = 0; i < n; i++) {
        m->at_peak[i] = top[i];
        pi_site_resolve(&m->at_peak[i], reader);
    }
    m->at_peak_count = n;
}

static void allocated(struct pi_gpu_memory *m, const struct pi_reader *reader,
                      const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    unsigned kind = PI_CUDA_SUBTYPE(r->flags);
    struct pi_u64_entry *e = pi_u64_map_put(m->live_map, r->arg[0] ? r->arg[0] : 1);
    if (!e)
        return;
    int before_window = PI_CUDA_API(r->flags) == PI_CUDA_API_live_at_window_start;
    uint32_t stack = PI_CUDA_STACK(r->arg[2]);
    if (before_window && !stack)
        stack = PI_BEFORE_WINDOW_SITE;
    unsigned device = PI_CUDA_DEVICE(r->arg[2]) % PI_MAX_DEVICES;
    e->value[0] = r->arg[1];
    e->value[1] = LIVE_INFO(kind, device, ev->ts_ns);
    e->value[2] = stack;
    if (pi_gpu_alloc_on_host(kind)) {
        m->pinned_live += r->arg[1];
        if (m->pinned_live > m->pinned_peak)
            m->pinned_peak = m->pinned_live;
        return;
    }
    if (before_window) {
        m->live_at_window_start += r->arg[1];
    } else {
        m->allocations++;
        m->allocated_bytes += r->arg[1];
    }
    m->live += r->arg[1];
    m->device_live[device] += r->arg[1];
    if (m->device_live[device] > m->device_peak[device])
        m->device_peak[device] = m->device_live[device];
    if (device + 1 > m->devices_seen)
        m->devices_seen = device + 1;
    struct pi_u64_entry *site = pi_u64_map_put(m->site_map, (uint64_t)stack + 1);
    if (site) {
        site->value[0] += r->arg[1];
        site->value[1]++;
    }
    changed(m, ev->ts_ns);
    if (m->live > m->peak) {
        /* the sites are looked at again only when the peak grew by 1% */
        int again = m->live > m->peak + m->peak / 100 || m->at_peak_count == 0;
        m->peak = m->live;
        m->peak_ns = ev->ts_ns;
        if (again)
            snapshot_sites(m, reader);
    }
}

static void released(struct pi_gpu_memory *m, const struct pi_event *ev)
{
    struct pi_u64_entry *e = pi_u64_map_get(m->live_map, ev->rec.arg[0] ? ev->rec.arg[0] : 1);
    if (!e)
        return; /* allocated before recording began */
    uint64_t bytes = e->value[0];
    unsigned kind = LIVE_KIND(e->value[1]), device = LIVE_DEVICE(e->value[1]);
    if (pi_gpu_alloc_on_host(kind)) {
        m->pinned_live -= bytes;
    } else {
        m->frees++;
        m->live -= bytes;
        m->device_live[device % PI_MAX_DEVICES] -= bytes;
        struct pi_u64_entry *site = pi_u64_map_get(m->site_map, e->value[2] + 1);
        if (site) {
            site->value[0] -= bytes;
            site->value[1]--;
        }
        changed(m, ev->ts_ns);
    }
    pi_u64_map_remove(m->live_map, ev->rec.arg[0] ? ev->rec.arg[0] : 1);
}

/* A pool's reserve as the driver read it; the peak of each pool is its own high-water mark.
 * Readings come from several threads, whose buffers reach the file in any
 * order: the one taken last, not the one read last, is the pool's reserve now. */
static void pool_reserve(struct pi_gpu_memory *m, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    unsigned i = 0;
    while (i < m->pool_count && m->pools[i].pool != r->arg[0])
        i++;
    if (i == m->pool_count) {
        if (m->pool_count == PI_MAX_POOLS)
            return;
        m->pools[m->pool_count++] = (struct pi_pool_reserve){r->arg[0], 0, 0, 0};
    }
    if (ev->ts_ns >= m->pools[i].read_at_ns) {
        m->pools[i].reserved = r->arg[1];
        m->pools[i].read_at_ns = ev->ts_ns;
    }
    if (r->arg[2] > m->pools[i].high)
        m->pools[i].high = r->arg[2];
    m->pool_reserved_peak = m->pool_reserved_end = 0;
    for (unsigned k = 0; k < m->pool_count; k++) {
        m->pool_reserved_peak += m->pools[k].high;
        m->pool_reserved_end += m->pools[k].reserved;
    }
}

/* The Python frames of a live allocation, read after it was recorded. */
static void call_site(struct pi_gpu_memory *m, const struct pi_reader *reader,
                      const struct pi_event *ev)
{
    uint64_t pointer = ev->rec.arg[2] ? ev->rec.arg[2] : 1;
    struct pi_u64_entry *e = m && m->live_map ? pi_u64_map_get(m->live_map, pointer) : NULL;
    /* the same allocation: freed and made again since, it is another one */
    if (!e || LIVE_TS(e->value[1]) != (ev->ts_ns & 0xffffffffffffull))
        return;
    uint32_t stack = (uint32_t)(ev->rec.arg[0] & 0xffffffu);
    unsigned kind = LIVE_KIND(e->value[1]);
    if (!pi_gpu_alloc_on_host(kind)) {
        struct pi_u64_entry *old = pi_u64_map_get(m->site_map, e->value[2] + 1);
        if (old) {
            old->value[0] -= e->value[0];
            old->value[1]--;
        }
        struct pi_u64_entry *now = pi_u64_map_put(m->site_map, (uint64_t)stack + 1);
        if (now) {
            now->value[0] += e->value[0];
            now->value[1]++;
        }
    }
    e->value[2] = stack;
    /* still at the peak this allocation made: the picture of it gets the frames */
    if (m->live == m->peak && m->at_peak_count)
        snapshot_sites(m, reader);
}

/* Allocations, frees and allocation call sites that are now in time order. */
static void apply_memory(struct pi_gpu_memory *m, const struct pi_reader *reader, int all)
{
    struct pi_event ev;
    while (pi_memory_order_pop(&m->order, &ev, all)) {
        if (ev.rec.kind == PI_REC_GPU_ALLOC) {
            pi_device_failure_in_order(m, &ev); /* before it counts: what was held without it */
            if (!(ev.rec.flags & PI_FLAG_FAILED))
                allocated(m, reader, &ev);
        }
        else if (ev.rec.kind == PI_REC_GPU_FREE)
            released(m, &ev);
        else
            call_site(m, reader, &ev);
    }
}

/* Every CUDA record but the timing choice: the time the memory queue has reached. */
static void seen(struct pi_analysis *a, struct pi_gpu_memory *m, const struct pi_event *ev)
{
    m->keep_changes = a->options.observer && a->options.observer->keep_memory_changes;
    pi_memory_order_seen(&m->order, ev->ts_ns);
}

uint64_t pi_gpu_time_event(struct pi_analysis *a, const struct pi_reader *reader,
                           struct pi_process_info *p, const struct pi_event *ev, int *collective)
{
    *collective = 0;
    struct pi_gpu_memory *m = memory_of(p);
    if (!m)
        return 0;
    seen(a, m, ev);
    pi_gpu_timeline_work(p, ev->ts_ns, ev->dur_ns);
    return pi_gpu_durations_time(a, p, reader, ev, collective);
}

void pi_gpu_event(struct pi_analysis *a, const struct pi_reader *reader, struct pi_process_info *p,
                  const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    struct pi_gpu_memory *m = memory_of(p);
    if (!m)
        return;
    if (r->kind == PI_REC_DEVICE_MEMORY) {
        pi_device_failure_memory(m, ev);
        return;
    }
    if (r->kind == PI_REC_GPU_TIMING) {
        /* chosen for the job when the file takes its place in the file order */
        pi_gpu_timing_keep(m, (int)r->arg[0], pi_reader_string(reader, r->arg[2]));
        return;
    }
    seen(a, m, ev);
    if (r->kind == PI_REC_GPU_POOL) {
        pool_reserve(m, ev);
        return;
    }
    if (PI_CUDA_API(r->flags) != PI_CUDA_API_live_at_window_start) /* no call */
        add(pi_latency_get(&a->calls, "cuda", pi_cuda_api_name(PI_CUDA_API(r->flags)),
                           pi_cuda_level_name(r->flags)),
            ev->dur_ns, 0);
    int nested = (r->flags & PI_CUDA_NESTED) != 0, failed = (r->flags & PI_FLAG_FAILED) != 0;
    if (r->kind == PI_REC_GPU_ALLOC && !nested && failed) {
        /* kept now (its call site and the device's account follow it in the file), and taken
         * in time order with the allocations, for what the process held then */
        pi_device_failure_event(m, reader, ev);
        if (pi_memory_order_push(&m->order, ev) == 0)
            apply_memory(m, reader, 0);
        return;
    }
    if (nested || failed)
        return;
    char name[1024];
    switch (r->kind) {
    case PI_REC_GPU_ALLOC:
    case PI_REC_GPU_FREE:
        if (pi_memory_order_push(&m->order, ev) == 0)
            apply_memory(m, reader, 0);
        break;
    case PI_REC_GPU_LAUNCH: {
        const char *kernel = r->arg[1] ? pi_reader_string(reader, r->arg[1]) : NULL;
        if (PI_CUDA_SUBTYPE(r->flags) == PI_GPU_GRAPH)
            kernel = "(CUDA graph)";
        else /* which threads launch it: those with Python frames, or autograd's */
            pi_python_sites_launch(a, r->tid, r->arg[1], 1);
        pi_demangle(kernel ? kernel : "(unknown kernel)", name, sizeof(name));
        add(pi_latency_get(&a->calls, "kernel", name, "launch"), ev->dur_ns, 0);
        pi_gpu_timeline_launch(p, ev->ts_ns, ev->dur_ns);
        pi_gpu_durations_expect(a, p, r->arg[0], pi_latency_get(&a->calls, "gpu", name, "kernel"),
                                ev->ts_ns);
        break;
    }
    case PI_REC_GPU_COPY: {
        const char *direction = pi_gpu_copy_kind_name(PI_CUDA_SUBTYPE(r->flags));
        int host_side = PI_CUDA_SUBTYPE(r->flags) == PI_GPU_COPY_HTOD ||
                        PI_CUDA_SUBTYPE(r->flags) == PI_GPU_COPY_DTOH;
        snprintf(name, sizeof(name), "%s %s", host_side ? ((r->flags & PI_CUDA_PINNED) ? "pinned" : "pageable") : "-",
                 pi_copy_size_class(r->arg[0]));
        add(pi_latency_get(&a->calls, "copy", direction, name), ev->dur_ns, r->arg[0]);
        pi_gpu_durations_expect(a, p, r->arg[1],
                                pi_latency_get(&a->calls, "gpu", direction, "copy"), ev->ts_ns);
        break;
    }
    default:
        break;
    }
}

/* What is still live, by call site, largest first: all of it, or what was allocated from @since_ns. */
static struct pi_site_bytes *live_sites(struct pi_gpu_memory *m, const struct pi_reader *reader,
                                        uint64_t since_ns, size_t *count)
{
    struct pi_u64_map *by_site = pi_u64_map_new();
    struct pi_u64_map *live = m->live_map;
    uint64_t since = since_ns & 0xffffffffffffull; /* live allocations keep 48 bits of their time */
    for (size_t i = 0; by_site && i < live->capacity; i++) {
        struct pi_u64_entry *e = &live->slots[i];
        unsigned kind = LIVE_KIND(e->value[1]);
        if (!e->key || pi_gpu_alloc_on_host(kind) ||
            (since && LIVE_TS(e->value[1]) < since))
            continue;
        struct pi_u64_entry *s = pi_u64_map_put(by_site, e->value[2] + 1);
        if (s) {
            s->value[0] += e->value[0];
            s->value[1]++;
        }
    }
    *count = 0;
    struct pi_site_bytes *sites = by_site ? calloc(by_site->count + 1, sizeof(*sites)) : NULL;
    for (size_t i = 0; sites && i < by_site->capacity; i++) {
        struct pi_u64_entry *s = &by_site->slots[i];
        if (s->key) {
            struct pi_site_bytes *site = &sites[(*count)++];
            *site = (struct pi_site_bytes){(uint32_t)(s->key - 1), NULL, s->value[0], s->value[1],
                                           NULL};
            pi_site_resolve(site, reader);
        }
    }
    if (sites)
        qsort(sites, *count, sizeof(*sites), by_bytes);
    pi_u64_map_free(by_site);
    return sites;
}

void pi_gpu_finish_process(struct pi_analysis *a, const struct pi_reader *reader,
                           struct pi_process_info *p)
{
    (void)a;
    pi_collectives_finish_file(p, reader);
    pi_gemm_finish_file(p);
    struct pi_gpu_memory *m = p->gpu;
    if (!m || !m->live_map)
        return;
    apply_memory(m, reader, 1);
    pi_memory_order_free(&m->order);
    m->leaks = live_sites(m, reader, 0, &m->leak_count);
    if (m->grown_since_ns)
        m->grown = live_sites(m, reader, m->grown_since_ns, &m->grown_count);
    pi_u64_map_free(m->live_map);
    pi_u64_map_free(m->site_map);
    pi_u64_map_free(m->correlations);
    m->live_map = m->site_map = m->correlations = NULL;
}

void pi_gpu_free_process(struct pi_process_info *p)
{
    pi_collectives_free(p);
    pi_gemm_free(p);
    free(p->gpu_timeline);
    p->gpu_timeline = NULL;
    struct pi_gpu_memory *m = p->gpu;
    if (!m)
        return;
    for (int i = 0; i < m->at_peak_count; i++)
        pi_site_free(&m->at_peak[i]);
    pi_device_failures_free(m);
    for (size_t i = 0; i < m->leak_count; i++)
        pi_site_free(&m->leaks[i]);
    free(m->leaks);
    for (size_t i = 0; i < m->grown_count; i++)
        pi_site_free(&m->grown[i]);
    free(m->grown);
    pi_u64_map_free(m->live_map);
    pi_u64_map_free(m->site_map);
    pi_u64_map_free(m->correlations);
    pi_memory_order_free(&m->order);
    free(m->changes);
    pi_series_free(&m->series);
    pi_gpu_timing_free(m);
    free(m);
    p->gpu = NULL;
}

void pi_gpu_call_site(struct pi_process_info *p, const struct pi_reader *reader,
                      const struct pi_event *ev)
{
    struct pi_gpu_memory *m = memory_of(p);
    if (m && (PI_CALL_SITE_FLAGS(ev->rec.arg[1]) & PI_FLAG_FAILED)) {
        pi_device_failure_site(m, reader, ev); /* a request that failed: no allocation to name */
        return;
    }
    if (m && pi_memory_order_push(&m->order, ev) == 0)
        apply_memory(m, reader, 0);
}
