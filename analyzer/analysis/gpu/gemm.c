/* gemm.c - the matrix products of a process and their kernels (gemm.h), in one pass. */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"

#define RING 32                    /* a thread's recent launches: a product launches a few */
#define MAX_EARLY_TIMES (1u << 16) /* GPU times waiting for their launch, at most */

struct thread_state {
    uint32_t tid;
    uint64_t corr[RING], ts[RING], name[RING];
    unsigned first, count;
};

/* corr -> claimed: value[0] shape + 1, value[1] kernel + 1; or early: value[2] its time + 1 */
struct state {
    struct thread_state *threads;
    size_t thread_count, thread_capacity, last;
    struct pi_u64_map *claimed, *early;
    uint64_t *kernel_ids; /* string id of each kernel row, while the file is read */
};

static struct pi_gemm *gemm_of(struct pi_process_info *p)
{
    if (p->gemm)
        return p->gemm;
    struct pi_gemm *g = calloc(1, sizeof(*g));
    struct state *s = calloc(1, sizeof(*s));
    if (!g || !s || !(s->claimed = pi_u64_map_new()) || !(s->early = pi_u64_map_new())) {
        if (s)
            pi_u64_map_free(s->claimed);
        free(s);
        free(g);
        return NULL;
    }
    g->state = s;
    return p->gemm = g;
}

static struct thread_state *thread_of(struct state *s, uint32_t tid)
{
    if (s->last < s->thread_count && s->threads[s->last].tid == tid)
        return &s->threads[s->last];
    for (size_t i = 0; i < s->thread_count; i++)
        if (s->threads[i].tid == tid)
            return &s->threads[s->last = i];
    if (pi_array_room(&s->threads, &s->thread_capacity, s->thread_count, sizeof(*s->threads), 4))
        return NULL;
    struct thread_state *t = &s->threads[s->last = s->thread_count++];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    return t;
}

/* The oldest launch of @t taken off its ring; its early time, if any, will never be claimed. */
static unsigned ring_take(struct thread_state *t)
{
    unsigned at = t->first;
    t->first = (t->first + 1) % RING;
    t->count--;
    return at;
}

static void ring_drop(struct state *s, struct thread_state *t)
{
    unsigned at = ring_take(t);
    if (s->early->count) /* most often none: no lookup per launch */
        pi_u64_map_remove(s->early, t->corr[at]);
}

static void launch(struct state *s, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    if (r->flags & (PI_CUDA_NESTED | PI_FLAG_FAILED))
        return; /* a nested driver launch repeats its runtime launch */
    struct thread_state *t = thread_of(s, r->tid);
    if (!t)
        return;
    if (t->count == RING)
        ring_drop(s, t);
    unsigned at = (t->first + t->count++) % RING;
    t->corr[at] = r->arg[0] ? r->arg[0] : 1;
    t->ts[at] = ev->ts_ns;
    t->name[at] = r->arg[1];
}

static size_t shape_of(struct pi_gemm *g, uint32_t m, uint32_t n, uint32_t k, uint32_t batch,
                       const char *dtype)
{
    for (size_t i = g->shape_count; i-- > 0;) {
        const struct pi_gemm_shape *x = &g->shapes[i];
        if (x->m == m && x->n == n && x->k == k && x->batch == batch && x->dtype == dtype)
            return i;
    }
    if (pi_array_room(&g->shapes, &g->shape_capacity, g->shape_count, sizeof(*g->shapes), 16))
        return SIZE_MAX;
    g->shapes[g->shape_count] =
        (struct pi_gemm_shape){.m = m, .n = n, .k = k, .batch = batch, .dtype = dtype};
    return g->shape_count++;
}

static size_t kernel_of(struct pi_gemm *g, struct state *s, const struct pi_reader *reader,
                        uint64_t name_id)
{
    for (size_t i = 0; i < g->kernel_count; i++)
        if (s->kernel_ids[i] == name_id)
            return i;
    size_t capacity = g->kernel_capacity;
    if (pi_array_room(&g->kernels, &g->kernel_capacity, g->kernel_count, sizeof(*g->kernels), 8))
        return SIZE_MAX;
    if (capacity != g->kernel_capacity) {
        uint64_t *ids = realloc(s->kernel_ids, g->kernel_capacity * sizeof(*ids));
        if (!ids)
            return SIZE_MAX;
        s->kernel_ids = ids;
    }
    const char *name = name_id ? pi_reader_string(reader, name_id) : NULL;
    struct pi_gemm_kernel *k = &g->kernels[g->kernel_count];
    memset(k, 0, sizeof(*k));
    if (!(k->name = strdup(name ? name : "(unknown kernel)")))
        return SIZE_MAX;
    s->kernel_ids[g->kernel_count] = name_id;
    return g->kernel_count++;
}

static void time_arrived(struct pi_gemm *g, size_t shape, size_t kernel, uint64_t ns)
{
    g->shapes[shape].gpu_ns += ns;
    g->kernels[kernel].gpu_ns += ns;
    g->gpu_ns += ns;
}

static void product(struct pi_gemm *g, struct state *s, const struct pi_reader *reader,
                    const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    if (r->flags & PI_FLAG_FAILED) {
        g->failed++;
        return;
    }
    uint32_t m = PI_GEMM_LOW(r->arg[0]), n = PI_GEMM_HIGH(r->arg[0]);
    uint32_t k = PI_GEMM_LOW(r->arg[1]), batch = PI_GEMM_HIGH(r->arg[1]);
    uint64_t flops; /* saturated: four 32-bit sizes could overflow */
    if (__builtin_mul_overflow(2ull * m * n, (uint64_t)k * batch, &flops))
        flops = UINT64_MAX;
    size_t shape =
        shape_of(g, m, n, k, batch, pi_gemm_dtype(PI_GEMM_A_TYPE(r->arg[2]),
                                                   PI_GEMM_COMPUTE(r->arg[2])));
    struct thread_state *t = thread_of(s, r->tid);
    if (shape == SIZE_MAX || !t)
        return;
    struct pi_gemm_shape *x = &g->shapes[shape];
    x->calls++;
    x->flops += flops;
    g->calls++;
    g->flops += (double)flops;
    if (!pi_array_room(&g->moments, &g->moment_capacity, g->moment_count, sizeof(*g->moments),
                       64))
        g->moments[g->moment_count++] = (struct pi_gemm_moment){ev->ts_ns, flops};
    /* its kernels: this thread's launches inside its span; older ones were no product's */
    uint64_t end = ev->ts_ns + ev->dur_ns;
    unsigned mine[RING], count = 0;
    while (t->count && t->ts[t->first] < ev->ts_ns)
        ring_drop(s, t);
    while (t->count && t->ts[t->first] <= end)
        mine[count++] = ring_take(t);
    for (unsigned i = 0; i < count; i++) {
        size_t kernel = kernel_of(g, s, reader, t->name[mine[i]]);
        uint64_t corr = t->corr[mine[i]];
        struct pi_u64_entry *early = pi_u64_map_get(s->early, corr);
        uint64_t early_ns = early ? early->value[2] - 1 : 0;
        if (early)
            pi_u64_map_remove(s->early, corr);
        if (kernel == SIZE_MAX)
            continue;
        g->kernels[kernel].flops += (double)flops / count;
        g->kernels[kernel].kernels++;
        x->kernels++;
        if (early) {
            time_arrived(g, shape, kernel, early_ns);
            continue;
        }
        struct pi_u64_entry *e = pi_u64_map_put(s->claimed, corr);
        if (e) {
            e->value[0] = shape + 1;
            e->value[1] = kernel + 1;
        }
    }
}

void pi_gemm_event(struct pi_process_info *p, const struct pi_reader *reader,
                   const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    if (r->kind != PI_REC_GEMM && r->kind != PI_REC_GPU_LAUNCH)
        return;
    struct pi_gemm *g = gemm_of(p);
    if (!g || !g->state)
        return;
    if (r->kind == PI_REC_GPU_LAUNCH)
        launch(g->state, ev);
    else
        product(g, g->state, reader, ev);
}

void pi_gemm_gpu_time(struct pi_process_info *p, const struct pi_event *ev, uint64_t launched)
{
    struct pi_gemm *g = p->gemm;
    if (!g || !g->state || (ev->rec.flags & PI_GPU_TIME_PART))
        return;
    struct state *s = g->state;
    uint64_t corr = ev->rec.arg[0] ? ev->rec.arg[0] : 1;
    struct pi_u64_entry *e = pi_u64_map_get(s->claimed, corr);
    if (e) {
        time_arrived(g, e->value[0] - 1, e->value[1] - 1, ev->dur_ns);
        pi_u64_map_remove(s->claimed, corr);
    } else if (!launched && s->early->count < MAX_EARLY_TIMES &&
               (e = pi_u64_map_put(s->early, corr)) != NULL) {
        e->value[2] = ev->dur_ns + 1; /* before its launch: kept until a product claims it */
    }
}

static int by_flops(const void *a, const void *b)
{
    const struct pi_gemm_shape *x = a, *y = b;
    if (x->flops != y->flops)
        return x->flops > y->flops ? -1 : 1;
    return x->gpu_ns > y->gpu_ns ? -1 : x->gpu_ns < y->gpu_ns;
}

static int by_time(const void *a, const void *b)
{
    const struct pi_gemm_moment *x = a, *y = b;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

void pi_gemm_finish_file(struct pi_process_info *p)
{
    struct pi_gemm *g = p->gemm;
    if (!g || !g->state)
        return;
    struct state *s = g->state;
    g->untimed_kernels = s->claimed->count; /* claimed, their times never came */
    pi_u64_map_free(s->claimed);
    pi_u64_map_free(s->early);
    free(s->kernel_ids);
    free(s->threads);
    free(s);
    g->state = NULL;
    if (g->calls == 0 && g->failed == 0) { /* launches, but no product: nothing to keep */
        pi_gemm_free(p);
        return;
    }
    qsort(g->shapes, g->shape_count, sizeof(*g->shapes), by_flops);
    qsort(g->moments, g->moment_count, sizeof(*g->moments), by_time);
}

void pi_gemm_free(struct pi_process_info *p)
{
    struct pi_gemm *g = p->gemm;
    if (!g)
        return;
    if (g->state) {
        struct state *s = g->state;
        pi_u64_map_free(s->claimed);
        pi_u64_map_free(s->early);
        free(s->kernel_ids);
        free(s->threads);
        free(s);
    }
    for (size_t i = 0; i < g->kernel_count; i++)
        free(g->kernels[i].name);
    free(g->kernels);
    free(g->shapes);
    free(g->moments);
    free(g);
    p->gemm = NULL;
}

void pi_gemm_release_moments(struct pi_process_info *p)
{
    if (!p->gemm)
        return;
    free(p->gemm->moments);
    p->gemm->moments = NULL;
    p->gemm->moment_count = p->gemm->moment_capacity = 0;
}

double pi_gemm_flops_between(const struct pi_process_info *p, uint64_t start, uint64_t end)
{
    const struct pi_gemm *g = p->gemm;
    if (!g || !g->moment_count)
        return 0;
    size_t low = 0, high = g->moment_count; /* the first at or after start */
    while (low < high) {
        size_t mid = (low + high) / 2;
        if (g->moments[mid].ns < start)
            low = mid + 1;
        else
            high = mid;
    }
    double flops = 0;
    for (size_t i = low; i < g->moment_count && g->moments[i].ns < end; i++)
        flops += (double)g->moments[i].flops;
    return flops;
}

int pi_gemm_kernel_figures(const struct pi_analysis *a, const char *name, double *flops,
                           uint64_t *gpu_ns)
{
    *flops = 0;
    *gpu_ns = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_gemm *g = a->processes[i].gemm;
        for (size_t k = 0; g && k < g->kernel_count; k++)
            if (strcmp(g->kernels[k].name, name) == 0) {
                *flops += g->kernels[k].flops;
                *gpu_ns += g->kernels[k].gpu_ns;
            }
    }
    return *flops > 0;
}
