/*
 * python_sites.c - sampled launches and the training loop's waits by
 * Python line (see python_sites.h). Within a file, records are counted by
 * stack id; at its end each stack becomes a call site and joins the lists
 * for all processes, where equal sites (same text) of different files add
 * up.
 */
#include "python_sites.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/sites/demangle.h"
#include "analysis/common/u64_map.h"

#define WAIT_BIT (1ull << 63)
#define NATIVE_BIT (1ull << 31) /* a launch's native-only site; stack ids have 24 bits */

static struct pi_python_sites *sites_of(struct pi_analysis *a)
{
    if (!a->python_sites)
        a->python_sites = calloc(1, sizeof(struct pi_python_sites));
    return a->python_sites;
}

/* The time class of a wait of the training loop (the main thread of a
 * process that started others: data-loader workers), as record_dispatch.c gives
 * it, for a call site of thread @tid on a record that PI_CALL_SITE_OF @site_of
 * describes; PI_TIME_CLASS_COUNT for any other wait. */
static unsigned wait_class(const struct pi_process_info *p, uint32_t tid, uint64_t site_of)
{
    unsigned kind = PI_CALL_SITE_KIND(site_of), flags = PI_CALL_SITE_FLAGS(site_of);
    if ((int)tid != p->header.pid || p->children == 0)
        return PI_TIME_CLASS_COUNT;
    if (kind == PI_REC_WAIT && PI_CALL_SITE_DETAIL(site_of) < PI_WAIT_KIND_COUNT)
        return PI_TIME_LOCK_WAIT;
    if (kind == PI_REC_IO && pi_io_is_data_wait(PI_IO_OP(flags), PI_IO_CLASS(flags)))
        return PI_TIME_DATA_WAIT;
    return PI_TIME_CLASS_COUNT;
}

static void note_python(struct pi_python_sites *s, const struct pi_reader *reader,
                        const struct pi_process_info *p, const struct pi_record *r)
{
    struct pi_python_process *grown =
        realloc(s->processes, (s->process_count + 1) * sizeof(*grown));
    if (!grown)
        return;
    s->processes = grown;
    const char *reason = pi_reader_string(reader, r->arg[2]);
    grown[s->process_count++] = (struct pi_python_process){
        p->header.pid, (unsigned)r->arg[0], (unsigned)r->arg[1], strdup(reason ? reason : "")};
}

void pi_python_sites_event(struct pi_analysis *a, const struct pi_reader *reader,
                           const struct pi_process_info *p, const struct pi_event *ev)
{
    struct pi_python_sites *s = sites_of(a);
    const struct pi_record *r = &ev->rec;
    if (!s)
        return;
    if (r->kind == PI_REC_PYTHON) {
        note_python(s, reader, p, r);
        return;
    }
    pi_python_sites_add(a, p, r->tid, r->flags, r->arg[0], r->arg[1], r->arg[2], 1,
                        pi_reader_ticks_to_ns(reader, r->ts + r->arg[2]) -
                            pi_reader_ticks_to_ns(reader, r->ts));
}

void pi_python_sites_add(struct pi_analysis *a, const struct pi_process_info *p, uint32_t tid,
                         unsigned flags, uint64_t stack_id, uint64_t site_of, uint64_t key,
                         uint64_t count, uint64_t wait_ns)
{
    struct pi_python_sites *s = sites_of(a);
    uint64_t stack = stack_id & 0xffffffu, entry_key, ns = 0;
    if (!s || !stack)
        return;
    if (PI_CALL_SITE_KIND(site_of) == PI_REC_GPU_LAUNCH) {
        int native = (flags & PI_CALL_SITE_NATIVE) != 0;
        entry_key = stack | (key & 0x7fffffffu) << 32 | (native ? NATIVE_BIT : 0);
        if (!native && !s->python_threads)
            s->python_threads = pi_u64_map_new();
        if (!native && s->python_threads && tid)
            pi_u64_map_put(s->python_threads, tid);
    } else {
        unsigned class = wait_class(p, tid, site_of);
        if (class >= PI_TIME_CLASS_COUNT)
            return;
        entry_key = WAIT_BIT | stack | (uint64_t) class << 32;
        ns = wait_ns;
    }
    if (!s->pending)
        s->pending = pi_u64_map_new();
    struct pi_u64_entry *e = s->pending ? pi_u64_map_put(s->pending, entry_key) : NULL;
    if (e) {
        e->value[0] += count;
        e->value[1] += ns;
    }
}

void pi_python_sites_launch(struct pi_analysis *a, uint32_t tid, uint64_t kernel_id,
                            uint64_t count)
{
    struct pi_python_sites *s = sites_of(a);
    if (!s || !tid)
        return;
    if (!s->thread_launches)
        s->thread_launches = pi_u64_map_new();
    struct pi_u64_entry *e =
        s->thread_launches
            ? pi_u64_map_put(s->thread_launches, (uint64_t)tid << 32 | (kernel_id & 0x7fffffffu))
            : NULL;
    if (e)
        e->value[0] += count;
}

/* The demangled name of the kernel whose name is string @id of the file. */
static void kernel_name(const struct pi_reader *reader, uint64_t id, char *name, size_t size)
{
    const char *mangled = pi_reader_string(reader, id);
    pi_demangle(mangled ? mangled : "(unknown kernel)", name, size);
}

static struct pi_python_launches *python_launches(const struct pi_python_sites *s,
                                                  const char *kernel)
{
    for (size_t i = 0; s && i < s->python_launch_count; i++)
        if (strcmp(s->python_launches[i].kernel, kernel) == 0)
            return &s->python_launches[i];
    return NULL;
}

static void add_python_launches(struct pi_python_sites *s, const char *kernel, uint64_t count)
{
    struct pi_python_launches *known = python_launches(s, kernel);
    if (known) {
        known->count += count;
        return;
    }
    struct pi_python_launches *grown =
        realloc(s->python_launches, (s->python_launch_count + 1) * sizeof(*grown));
    char *copy = strdup(kernel);
    if (!grown || !copy) {
        free(copy);
        if (grown)
            s->python_launches = grown;
        return;
    }
    s->python_launches = grown;
    grown[s->python_launch_count++] = (struct pi_python_launches){copy, count};
}

uint64_t pi_python_launches_of(const struct pi_analysis *a, const char *kernel)
{
    const struct pi_python_launches *known = python_launches(a->python_sites, kernel);
    return known ? known->count : 0;
}

/* This file's launches by the threads that had Python frames, by kernel name. */
static void count_python_launches(struct pi_python_sites *s, const struct pi_reader *reader)
{
    struct pi_u64_map *launches = s->thread_launches, *threads = s->python_threads;
    for (size_t i = 0; launches && threads && i < launches->capacity; i++) {
        const struct pi_u64_entry *e = &launches->slots[i];
        if (!e->key || !pi_u64_map_get(threads, e->key >> 32))
            continue;
        char name[1024];
        kernel_name(reader, e->key & 0x7fffffffu, name, sizeof(name));
        add_python_launches(s, name, e->value[0]);
    }
    pi_u64_map_free(launches);
    pi_u64_map_free(threads);
    s->thread_launches = s->python_threads = NULL;
}

static struct pi_line_stat *merge(struct pi_line_stat **list, size_t *count,
                                  struct pi_call_site *site, const char *kernel, int wait_class)
{
    for (size_t i = 0; i < *count; i++) {
        struct pi_line_stat *l = &(*list)[i];
        if (l->wait_class == wait_class && strcmp(l->site->text, site->text) == 0 &&
            (!kernel || strcmp(l->kernel, kernel) == 0)) {
            pi_call_site_free(site);
            return l;
        }
    }
    struct pi_line_stat *grown = realloc(*list, (*count + 1) * sizeof(*grown));
    if (!grown) {
        pi_call_site_free(site);
        return NULL;
    }
    *list = grown;
    struct pi_line_stat *l = &grown[(*count)++];
    *l = (struct pi_line_stat){site, kernel ? strdup(kernel) : NULL, wait_class, 0, 0};
    return l;
}

void pi_python_sites_finish_file(struct pi_analysis *a, const struct pi_reader *reader)
{
    struct pi_python_sites *s = a->python_sites;
    struct pi_u64_map *pending = s ? s->pending : NULL;
    for (size_t i = 0; pending && i < pending->capacity; i++) {
        struct pi_u64_entry *e = &pending->slots[i];
        struct pi_call_site *site = e->key ? pi_call_site_read(reader, e->key & 0xffffffu) : NULL;
        if (!site)
            continue;
        struct pi_line_stat *l;
        if (e->key & WAIT_BIT) {
            unsigned class = (unsigned)((e->key >> 32) & 0xff);
            l = merge(&s->waits, &s->wait_count, site, NULL, (int)class);
        } else {
            char name[1024];
            kernel_name(reader, (e->key >> 32) & 0x7fffffffu, name, sizeof(name));
            l = e->key & NATIVE_BIT
                    ? merge(&s->native_launches, &s->native_launch_count, site, name, -1)
                    : merge(&s->launches, &s->launch_count, site, name, -1);
        }
        if (l) {
            l->count += e->value[0];
            l->total_ns += e->value[1];
        }
    }
    if (s) {
        pi_u64_map_free(s->pending);
        s->pending = NULL;
        count_python_launches(s, reader);
    }
}

/* Move @count lines of @from into @list, where they add up with equal lines; @from is emptied. */
static int merge_lines(struct pi_line_stat **list, size_t *count, struct pi_line_stat *from,
                       size_t from_count)
{
    int failed = 0;
    for (size_t i = 0; i < from_count; i++) {
        struct pi_line_stat *l =
            merge(list, count, from[i].site, from[i].kernel, from[i].wait_class);
        free(from[i].kernel); /* merge() keeps a copy, or the equal line's own */
        if (!l) {
            failed = -1;
            continue;
        }
        l->count += from[i].count;
        l->total_ns += from[i].total_ns;
    }
    return failed;
}

int pi_python_sites_merge(struct pi_analysis *into, struct pi_analysis *from)
{
    struct pi_python_sites *f = from->python_sites, *s = f ? sites_of(into) : NULL;
    if (!f)
        return 0;
    if (!s)
        return -1;
    int failed = merge_lines(&s->launches, &s->launch_count, f->launches, f->launch_count) |
                 merge_lines(&s->native_launches, &s->native_launch_count, f->native_launches,
                             f->native_launch_count) |
                 merge_lines(&s->waits, &s->wait_count, f->waits, f->wait_count);
    /* the sites went over (or were freed by merge()) */
    f->launch_count = f->native_launch_count = f->wait_count = 0;
    for (size_t i = 0; i < f->python_launch_count; i++) {
        add_python_launches(s, f->python_launches[i].kernel, f->python_launches[i].count);
        free(f->python_launches[i].kernel);
    }
    f->python_launch_count = 0;
    struct pi_python_process *grown =
        realloc(s->processes, (s->process_count + f->process_count + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    s->processes = grown;
    if (f->process_count) /* none: @from may have no array at all */
        memcpy(grown + s->process_count, f->processes, f->process_count * sizeof(*grown));
    s->process_count += f->process_count;
    f->process_count = 0; /* their reasons went over */
    return failed;
}

/* kernels with the most samples first; within a kernel, its most sampled sites */
static const struct pi_line_stat *sort_launches;
static size_t sort_launch_count;

static uint64_t kernel_samples(const char *kernel)
{
    uint64_t total = 0;
    for (size_t i = 0; i < sort_launch_count; i++)
        if (strcmp(sort_launches[i].kernel, kernel) == 0)
            total += sort_launches[i].count;
    return total;
}

static int by_kernel_then_count(const void *x, const void *y)
{
    const struct pi_line_stat *a = x, *b = y;
    int same = strcmp(a->kernel, b->kernel);
    if (same) {
        uint64_t ka = kernel_samples(a->kernel), kb = kernel_samples(b->kernel);
        return ka != kb ? (ka > kb ? -1 : 1) : same;
    }
    return a->count != b->count ? (a->count > b->count ? -1 : 1)
                                : strcmp(a->site->text, b->site->text);
}

static int by_time(const void *x, const void *y)
{
    const struct pi_line_stat *a = x, *b = y;
    return a->total_ns != b->total_ns ? (a->total_ns > b->total_ns ? -1 : 1)
                                      : strcmp(a->site->text, b->site->text);
}

void pi_python_sites_sort(struct pi_analysis *a)
{
    struct pi_python_sites *s = a->python_sites;
    if (!s)
        return;
    sort_launches = s->launches;
    sort_launch_count = s->launch_count;
    if (s->launch_count)
        qsort(s->launches, s->launch_count, sizeof(*s->launches), by_kernel_then_count);
    sort_launches = s->native_launches;
    sort_launch_count = s->native_launch_count;
    if (s->native_launch_count)
        qsort(s->native_launches, s->native_launch_count, sizeof(*s->native_launches),
              by_kernel_then_count);
    if (s->wait_count)
        qsort(s->waits, s->wait_count, sizeof(*s->waits), by_time);
}

const struct pi_line_stat *pi_kernel_launch_sites(const struct pi_analysis *a, const char *kernel,
                                                  size_t *count, uint64_t *samples)
{
    const struct pi_python_sites *s = a->python_sites;
    *count = 0;
    *samples = 0;
    if (!s)
        return NULL;
    const struct pi_line_stat *first = NULL;
    for (size_t i = 0; i < s->launch_count; i++)
        if (strcmp(s->launches[i].kernel, kernel) == 0) {
            if (!first)
                first = &s->launches[i];
            (*count)++;
            *samples += s->launches[i].count;
        }
    return first;
}

static void free_list(struct pi_line_stat *list, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        pi_call_site_free(list[i].site);
        free(list[i].kernel);
    }
    free(list);
}

void pi_python_sites_free(struct pi_analysis *a)
{
    struct pi_python_sites *s = a->python_sites;
    if (!s)
        return;
    free_list(s->launches, s->launch_count);
    free_list(s->native_launches, s->native_launch_count);
    free_list(s->waits, s->wait_count);
    for (size_t i = 0; i < s->process_count; i++)
        free(s->processes[i].reason);
    free(s->processes);
    for (size_t i = 0; i < s->python_launch_count; i++)
        free(s->python_launches[i].kernel);
    free(s->python_launches);
    pi_u64_map_free(s->pending);
    pi_u64_map_free(s->thread_launches);
    pi_u64_map_free(s->python_threads);
    free(s);
    a->python_sites = NULL;
}
