/*
 * collectives.c - the NCCL table of a process (collectives.h), in one pass.
 *
 * A call's kernels are the NCCL-named launches of its thread inside its
 * span. Records of one thread come in order, so a call's launches are read
 * before the call itself: each thread keeps its recent unclaimed NCCL
 * launches, and the call (or the group's end) claims those in its span.
 * A launch left before a span, pushed out of the ring or left at the end
 * ran outside any recorded call: static NCCL, kept by kernel name. GPU
 * times come by correlation id, before or after their launch or call.
 */
#include "collectives.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"

#define RING 64
#define MAX_EARLY_TIMES (1u << 16) /* GPU times waiting for their launch, at most */
/* One thread's NCCL launches not claimed yet, and its open group's rows. */
struct thread_state {
    uint32_t tid;
    uint64_t corr[RING], ts[RING];
    unsigned first, count;
    uint32_t *group_rows;
    size_t group_count, group_capacity;
};

/* Who a kernel's GPU time goes to: the rows of one call or group, split evenly. */
struct share {
    uint32_t *rows;
    uint32_t count;
    uint32_t waiting; /* claimed kernels whose time has not come */
};

/* corr -> what the launch is: map values */
enum { TARGET = 0, TIME = 1, STATE = 2 };
enum { UNCLAIMED = 0, TO_SHARE = 1, TO_KERNEL = 2 }; /* STATE low bits; bit 8: has time */
#define HAS_TIME 0x100u

struct state {
    struct thread_state *threads;
    size_t thread_count, thread_capacity;
    struct share *shares;
    size_t share_count, share_capacity;
    struct pi_u64_map *launches; /* corr -> target, time, state */
    struct pi_u64_map *comm_of;  /* handle -> index + 1 of its latest communicator */
    uint64_t *kernel_names;      /* string id of each outside kernel, while the file is read */
};

static struct pi_collectives *collectives_of(struct pi_process_info *p)
{
    if (p->collectives)
        return p->collectives;
    struct pi_collectives *c = calloc(1, sizeof(*c));
    struct state *s = calloc(1, sizeof(*s));
    if (!c || !s || !(s->launches = pi_u64_map_new()) || !(s->comm_of = pi_u64_map_new())) {
        if (s)
            pi_u64_map_free(s->launches);
        free(s);
        free(c);
        return NULL;
    }
    c->state = s;
    return p->collectives = c;
}

static int is_nccl_kernel(const char *name)
{
    return pi_is_nccl_kernel(name);
}

static struct thread_state *thread_of(struct state *s, uint32_t tid)
{
    for (size_t i = 0; i < s->thread_count; i++)
        if (s->threads[i].tid == tid)
            return &s->threads[i];
    if (pi_array_room(&s->threads, &s->thread_capacity, s->thread_count, sizeof(*s->threads), 4))
        return NULL;
    struct thread_state *t = &s->threads[s->thread_count++];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    return t;
}

/* ---- where GPU time goes ---- */

static void add_to_share(struct pi_collectives *c, struct share *sh, uint64_t ns)
{
    if (!sh->count)
        return;
    for (uint32_t i = 0; i < sh->count; i++) {
        /* the remainder of the even split to the first, so the sum stays exact */
        uint64_t part = ns / sh->count + (i == 0 ? ns % sh->count : 0);
        c->rows[sh->rows[i]].gpu_ns += part;
    }
    c->gpu_ns += ns;
}

static void release_share(struct share *sh)
{
    if (sh->waiting == 0) {
        free(sh->rows);
        sh->rows = NULL;
        sh->count = 0;
    }
}

static void time_arrived(struct pi_collectives *c, struct state *s, struct pi_u64_entry *e,
                         uint64_t corr, uint64_t ns)
{
    unsigned target = (unsigned)e->value[STATE] & 0xff;
    if (target == UNCLAIMED) {
        e->value[TIME] += ns;
        e->value[STATE] |= HAS_TIME;
        return;
    }
    if (target == TO_SHARE) {
        struct share *sh = &s->shares[e->value[TARGET]];
        add_to_share(c, sh, ns);
        sh->waiting--;
        release_share(sh);
    } else {
        c->outside[e->value[TARGET]].gpu_ns += ns;
        c->outside_gpu_ns += ns;
    }
    pi_u64_map_remove(s->launches, corr);
}

static size_t outside_kernel(struct pi_collectives *c, struct state *s,
                             const struct pi_reader *reader, uint64_t name_id)
{
    for (size_t i = 0; i < c->outside_count; i++)
        if (s->kernel_names[i] == name_id)
            return i;
    size_t capacity = c->outside_capacity;
    if (pi_array_room(&c->outside, &c->outside_capacity, c->outside_count, sizeof(*c->outside), 4))
        return SIZE_MAX;
    if (capacity != c->outside_capacity) {
        uint64_t *names = realloc(s->kernel_names, c->outside_capacity * sizeof(*names));
        if (!names)
            return SIZE_MAX;
        s->kernel_names = names;
    }
    const char *name = pi_reader_string(reader, name_id);
    struct pi_nccl_kernel *k = &c->outside[c->outside_count];
    memset(k, 0, sizeof(*k));
    if (!(k->name = strdup(name ? name : "(unknown kernel)")))
        return SIZE_MAX;
    s->kernel_names[c->outside_count] = name_id;
    return c->outside_count++;
}

/* Launch @corr goes to @share_index (a call or group) or, when SIZE_MAX, outside any call. */
static void claim(struct pi_collectives *c, struct state *s, const struct pi_reader *reader,
                  uint64_t corr, size_t share_index)
{
    struct pi_u64_entry *e = pi_u64_map_get(s->launches, corr);
    if (!e)
        return;
    uint64_t target, kind;
    if (share_index != SIZE_MAX) {
        s->shares[share_index].waiting++;
        target = share_index, kind = TO_SHARE;
        for (uint32_t i = 0; i < s->shares[share_index].count; i++)
            c->rows[s->shares[share_index].rows[i]].kernels++;
    } else {
        size_t k = outside_kernel(c, s, reader, e->value[TARGET]);
        if (k == SIZE_MAX) {
            pi_u64_map_remove(s->launches, corr);
            return;
        }
        c->outside[k].kernels++;
        target = k, kind = TO_KERNEL;
    }
    uint64_t early = e->value[STATE] & HAS_TIME ? e->value[TIME] : UINT64_MAX;
    e->value[TARGET] = target;
    e->value[TIME] = 0;
    e->value[STATE] = kind;
    if (early != UINT64_MAX)
        time_arrived(c, s, e, corr, early);
}

/* The oldest unclaimed launch of @t, taken off its ring. */
static uint64_t ring_take(struct thread_state *t)
{
    uint64_t corr = t->corr[t->first];
    t->first = (t->first + 1) % RING;
    t->count--;
    return corr;
}

/* Launches of @t before @start ran outside any call; those from @start to @end are @share's. */
static void claim_span(struct pi_collectives *c, struct state *s, const struct pi_reader *reader,
                       struct thread_state *t, uint64_t start, uint64_t end, size_t share)
{
    while (t->count) {
        uint64_t ts = t->ts[t->first];
        if (ts > end)
            break;
        uint64_t corr = ring_take(t);
        claim(c, s, reader, corr, ts >= start ? share : SIZE_MAX);
    }
}

static void launch(struct pi_collectives *c, struct state *s, const struct pi_reader *reader,
                   const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    uint64_t corr = r->arg[0] ? r->arg[0] : 1;
    struct pi_u64_entry *e = pi_u64_map_get(s->launches, corr);
    int nested = (r->flags & (PI_CUDA_NESTED | PI_FLAG_FAILED)) != 0;
    if (nested || !is_nccl_kernel(r->arg[1] ? pi_reader_string(reader, r->arg[1]) : NULL)) {
        if (e) /* a time that came before this launch, not an NCCL kernel's */
            pi_u64_map_remove(s->launches, corr);
        return;
    }
    struct thread_state *t = thread_of(s, r->tid);
    if (!t || (!e && !(e = pi_u64_map_put(s->launches, corr))))
        return;
    e->value[TARGET] = r->arg[1]; /* its name, until it is claimed */
    if (t->count == RING)
        claim(c, s, reader, ring_take(t), SIZE_MAX);
    unsigned at = (t->first + t->count++) % RING;
    t->corr[at] = corr;
    t->ts[at] = ev->ts_ns;
}

/* ---- the records of NCCL ---- */

static void communicator(struct pi_collectives *c, struct state *s, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    unsigned op = PI_NCCL_COMM_OP(r->flags);
    if (op == PI_NCCL_COMM_FINALIZE || op == PI_NCCL_COMM_DESTROY || op == PI_NCCL_COMM_ABORT) {
        struct pi_u64_entry *e = r->arg[0] ? pi_u64_map_get(s->comm_of, r->arg[0]) : NULL;
        if (e && !(r->flags & PI_FLAG_FAILED) && c->comms[e->value[0] - 1].end_op < op)
            c->comms[e->value[0] - 1].end_op = op;
        return;
    }
    if (pi_array_room(&c->comms, &c->comm_capacity, c->comm_count, sizeof(*c->comms), 8))
        return;
    struct pi_nccl_communicator *m = &c->comms[c->comm_count++];
    *m = (struct pi_nccl_communicator){.handle = r->arg[0], .hash = r->arg[1],
                                       .rank = PI_NCCL_RANK(r->arg[2]),
                                       .nranks = PI_NCCL_NRANKS(r->arg[2]), .op = op,
                                       .failed = (r->flags & PI_FLAG_FAILED) != 0,
                                       .at_ns = ev->ts_ns, .init_ns = ev->dur_ns};
    struct pi_u64_entry *e = r->arg[0] && !m->failed ? pi_u64_map_put(s->comm_of, r->arg[0]) : NULL;
    if (e)
        e->value[0] = c->comm_count;
}

static size_t row_of(struct pi_collectives *c, unsigned func, unsigned datatype, uint64_t bucket)
{
    for (size_t i = c->row_count; i-- > 0;)
        if (c->rows[i].func == func && c->rows[i].datatype == datatype &&
            c->rows[i].bucket == bucket)
            return i;
    if (pi_array_room(&c->rows, &c->row_capacity, c->row_count, sizeof(*c->rows), 16))
        return SIZE_MAX;
    c->rows[c->row_count] = (struct pi_collective_row){.func = func, .datatype = datatype,
                                                       .bucket = bucket};
    return c->row_count++;
}

static size_t new_share(struct state *s, const uint32_t *rows, size_t count)
{
    size_t i;
    for (i = 0; i < s->share_count; i++) /* a free one: its kernels all timed */
        if (!s->shares[i].rows && s->shares[i].waiting == 0)
            break;
    if (i == s->share_count &&
        pi_array_room(&s->shares, &s->share_capacity, s->share_count, sizeof(*s->shares), 16))
        return SIZE_MAX;
    uint32_t *copy = count ? malloc(count * sizeof(*copy)) : NULL;
    if (count && !copy)
        return SIZE_MAX;
    if (count)
        memcpy(copy, rows, count * sizeof(*copy));
    s->shares[i] = (struct share){.rows = copy, .count = (uint32_t)count};
    if (i == s->share_count)
        s->share_count++;
    return i;
}

static void collective(struct pi_collectives *c, struct state *s, const struct pi_reader *reader,
                       const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    unsigned func = PI_NCCL_FUNC(r->flags);
    int grouped = (r->flags & PI_NCCL_GROUPED) != 0;
    struct thread_state *t = thread_of(s, r->tid);
    if (!t)
        return;
    if (func == PI_NCCL_GROUP_START)
        return;
    if (func == PI_NCCL_GROUP_END) {
        if (grouped) /* an inner group's end: the outermost launches */
            return;
        size_t share = t->group_count ? new_share(s, t->group_rows, t->group_count) : SIZE_MAX;
        claim_span(c, s, reader, t, ev->ts_ns, ev->ts_ns + ev->dur_ns, share);
        if (share != SIZE_MAX)
            release_share(&s->shares[share]);
        t->group_count = 0;
        return;
    }
    struct pi_u64_entry *e = r->arg[1] ? pi_u64_map_get(s->comm_of, r->arg[1]) : NULL;
    struct pi_nccl_communicator *m = e ? &c->comms[e->value[0] - 1] : NULL;
    int nranks = m ? m->nranks : 0;
    uint64_t bytes = r->arg[0] * pi_nccl_datatype_size(PI_NCCL_DATATYPE(r->flags));
    if ((func == PI_NCCL_ALL_GATHER || func == PI_NCCL_REDUCE_SCATTER) && nranks > 0)
        bytes *= (uint64_t)nranks; /* as nccl-tests count them: the whole buffer */
    uint64_t bucket = bytes ? 1ull << (63 - __builtin_clzll(bytes)) : 0;
    size_t i = row_of(c, func, PI_NCCL_DATATYPE(r->flags), bucket);
    if (i == SIZE_MAX)
        return;
    struct pi_collective_row *row = &c->rows[i];
    if (r->flags & PI_FLAG_FAILED) {
        row->failed++;
        c->failed++;
    } else {
        row->calls++;
        row->bytes += bytes;
        row->bus_bytes += bytes * pi_collective_bus_factor(func, nranks);
        row->host_ns += ev->dur_ns;
        c->calls++;
        c->bytes += bytes;
        c->host_ns += ev->dur_ns;
        if (m) {
            m->calls++;
            m->last_func = func;
        }
    }
    uint32_t index = (uint32_t)i;
    if (grouped) {
        if (!(r->flags & PI_FLAG_FAILED) &&
            pi_array_room(&t->group_rows, &t->group_capacity, t->group_count,
                          sizeof(*t->group_rows), 8) == 0)
            t->group_rows[t->group_count++] = index;
        return;
    }
    size_t share = new_share(s, &index, 1);
    claim_span(c, s, reader, t, ev->ts_ns, ev->ts_ns + ev->dur_ns, share);
    if (share != SIZE_MAX)
        release_share(&s->shares[share]);
}

void pi_collectives_event(struct pi_process_info *p, const struct pi_reader *reader,
                          const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    if (r->kind != PI_REC_COLLECTIVE && r->kind != PI_REC_NCCL_COMM &&
        r->kind != PI_REC_GPU_LAUNCH && r->kind != PI_REC_GPU_COPY)
        return;
    /* no NCCL in this process so far: nothing to follow */
    if (!p->collectives && (r->kind == PI_REC_GPU_COPY ||
                            (r->kind == PI_REC_GPU_LAUNCH &&
                             !is_nccl_kernel(pi_reader_string(reader, r->arg[1])))))
        return;
    struct pi_collectives *c = collectives_of(p);
    if (!c)
        return;
    struct state *s = c->state;
    if (r->kind == PI_REC_NCCL_COMM)
        communicator(c, s, ev);
    else if (r->kind == PI_REC_COLLECTIVE)
        collective(c, s, reader, ev);
    else if (r->kind == PI_REC_GPU_LAUNCH)
        launch(c, s, reader, ev);
    else if (r->arg[1] && !(r->flags & PI_CUDA_NESTED))
        pi_u64_map_remove(s->launches, r->arg[1]); /* a copy's early time is no NCCL kernel's */
}

void pi_collectives_gpu_time(struct pi_process_info *p, const struct pi_event *ev,
                             uint64_t launched)
{
    struct pi_collectives *c = p->collectives;
    if (!c || !c->state)
        return;
    struct state *s = c->state;
    uint64_t corr = ev->rec.arg[0] ? ev->rec.arg[0] : 1;
    struct pi_u64_entry *e = pi_u64_map_get(s->launches, corr);
    if (e)
        time_arrived(c, s, e, corr, ev->dur_ns);
    else if (!launched && !(ev->rec.flags & PI_GPU_TIME_PART) &&
             s->launches->count < MAX_EARLY_TIMES &&
             (e = pi_u64_map_put(s->launches, corr)) != NULL) {
        /* before its launch: kept until the launch says whose it is (a time whose
         * launch was never recorded, outside a capture window, stays: hence the bound) */
        e->value[STATE] = UNCLAIMED | HAS_TIME;
        e->value[TIME] = ev->dur_ns;
    }
}

static int by_func_type_bucket(const void *a, const void *b)
{
    const struct pi_collective_row *x = a, *y = b;
    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    if (x->datatype != y->datatype)
        return x->datatype < y->datatype ? -1 : 1;
    return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

void pi_collectives_finish_file(struct pi_process_info *p, const struct pi_reader *reader)
{
    struct pi_collectives *c = p->collectives;
    if (!c || !c->state)
        return;
    struct state *s = c->state;
    /* launches no call claimed: outside any; times still to come stay unknown */
    for (size_t i = 0; reader && i < s->thread_count; i++)
        while (s->threads[i].count)
            claim(c, s, reader, ring_take(&s->threads[i]), SIZE_MAX);
    for (size_t i = 0; i < s->thread_count; i++)
        free(s->threads[i].group_rows);
    for (size_t i = 0; i < s->share_count; i++)
        free(s->shares[i].rows);
    free(s->threads);
    free(s->shares);
    free(s->kernel_names);
    pi_u64_map_free(s->launches);
    pi_u64_map_free(s->comm_of);
    free(s);
    c->state = NULL;
    /* shares index rows: the table is ordered only now that none is left */
    if (c->row_count)
        qsort(c->rows, c->row_count, sizeof(*c->rows), by_func_type_bucket);
}

void pi_collectives_free(struct pi_process_info *p)
{
    struct pi_collectives *c = p->collectives;
    if (!c)
        return;
    if (c->state) /* a file given up on before its end */
        pi_collectives_finish_file(p, NULL);
    for (size_t i = 0; i < c->outside_count; i++)
        free(c->outside[i].name);
    free(c->outside);
    free(c->rows);
    free(c->comms);
    free(c);
    p->collectives = NULL;
}
