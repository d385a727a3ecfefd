/* host_memory.c - the process tree's concurrent memory peaks (see host_memory.h). */
#include "host_memory.h"

#include <stdlib.h>

#include "analysis/model/model.h"

/* at one time: ends first, then samples, smallest value first */
struct change {
    uint64_t t;
    uint32_t process;
    uint64_t value; /* the process's memory from t on; 0 once it ended */
};

static int by_time(const void *a, const void *b)
{
    const struct change *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->value < y->value ? -1 : x->value > y->value;
}

/* A heap of (key, process) whose entries go stale rather than out: the
 * top is cleaned when looked at. @max: the largest key on top. */
struct heap {
    struct heap_entry {
        uint64_t key;
        uint32_t process;
    } *entries;
    size_t count;
    int max;
};

static int above(const struct heap *h, size_t i, size_t j)
{
    return h->max ? h->entries[i].key > h->entries[j].key : h->entries[i].key < h->entries[j].key;
}

static void swap_entries(struct heap *h, size_t i, size_t j)
{
    struct heap_entry e = h->entries[i];
    h->entries[i] = h->entries[j];
    h->entries[j] = e;
}

/* the room is allocated for every change beforehand */
static void heap_push(struct heap *h, uint64_t key, uint32_t process)
{
    size_t i = h->count++;
    h->entries[i] = (struct heap_entry){key, process};
    for (; i && above(h, i, (i - 1) / 2); i = (i - 1) / 2)
        swap_entries(h, i, (i - 1) / 2);
}

static void heap_pop(struct heap *h)
{
    h->entries[0] = h->entries[--h->count];
    for (size_t i = 0;;) {
        size_t best = i, l = 2 * i + 1, r = l + 1;
        if (l < h->count && above(h, l, best))
            best = l;
        if (r < h->count && above(h, r, best))
            best = r;
        if (best == i)
            return;
        swap_entries(h, i, best);
        i = best;
    }
}

struct tree_peak {
    uint64_t bytes, at_ns;
    uint32_t alive;
};

/* What a process counts with: its PSS reads, or its RSS samples where it has none or @pss is 0. */
static const struct pi_series *figure_of(const struct pi_process_info *p, int pss)
{
    return pss && p->pss.count ? &p->pss : &p->rss;
}

/*
 * The most the processes' latest figures added up to at one moment. With
 * PSS, not at every moment: a process's PSS falls when another starts to
 * share its pages (a fork child) and nothing says so until its next read,
 * a second or more later; the parent's PSS from before a fork beside its
 * child's after it counts the shared pages twice. So a sum counts only
 * where every process alive has read its PSS since the latest start among
 * them (an ended process shares nothing, and an exit only raises the
 * others' PSS: a figure read before it is below the truth, never above).
 * A process that never read its PSS (it ended or exec'd within its first
 * 100 ms) has no figure to count: the moments it lived are left out.
 */
static struct tree_peak sum_peak(const struct pi_analysis *a, int pss)
{
    struct tree_peak peak = {0, 0, 0};
    size_t total = 0, count = a->process_count ? a->process_count : 1;
    for (size_t i = 0; i < a->process_count; i++)
        total += figure_of(&a->processes[i], pss)->count + 1;
    struct change *changes = malloc((total ? total : 1) * sizeof(*changes));
    uint64_t *current = calloc(count, sizeof(*current));
    uint64_t *read_at = calloc(count, sizeof(*read_at)); /* the latest read, 0: never */
    /* the alive processes' latest reads (least on top) and starts (latest on top) */
    struct heap reads = {malloc((total ? total : 1) * sizeof(struct heap_entry)), 0, 0};
    struct heap starts = {malloc((total ? total : 1) * sizeof(struct heap_entry)), 0, 1};
    if (!changes || !current || !read_at || !reads.entries || !starts.entries)
        goto out;
    size_t n = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        const struct pi_series *s = figure_of(p, pss);
        for (uint32_t k = 0; k < s->count; k++)
            changes[n++] = (struct change){s->t[k], (uint32_t)i, s->v[k]};
        if (s->count)
            changes[n++] = (struct change){p->end_ns, (uint32_t)i, 0};
    }
    qsort(changes, n, sizeof(*changes), by_time);
    uint64_t sum = 0;
    uint32_t alive = 0;
    for (size_t k = 0; k < n; k++) {
        const struct change *c = &changes[k];
        const struct pi_process_info *p = &a->processes[c->process];
        int was_alive = current[c->process] > 0, is_alive = c->value > 0;
        alive += (uint32_t)is_alive - (uint32_t)was_alive;
        sum = sum - current[c->process] + c->value;
        current[c->process] = c->value;
        if (pss && is_alive) {
            /* RSS, a process's own, never goes stale; a process counted by it never read PSS */
            read_at[c->process] = p->pss.count ? c->t : 0;
            heap_push(&reads, read_at[c->process], c->process);
            if (!was_alive)
                heap_push(&starts, p->header.start_monotonic_ns, c->process);
        }
        while (reads.count && (!current[reads.entries[0].process] ||
                               read_at[reads.entries[0].process] != reads.entries[0].key))
            heap_pop(&reads);
        while (starts.count && !current[starts.entries[0].process])
            heap_pop(&starts);
        int fresh = !pss || !alive || reads.entries[0].key >= starts.entries[0].key;
        if (fresh && sum > peak.bytes)
            peak = (struct tree_peak){sum, c->t, alive};
    }
out:
    free(changes);
    free(current);
    free(read_at);
    free(reads.entries);
    free(starts.entries);
    return peak;
}

/* @s's latest value at or before @ns; 0 when it has none by then */
static uint64_t latest(const struct pi_series *s, uint64_t ns)
{
    size_t low = 0, high = s->count; /* the first point after ns */
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (s->t[middle] <= ns)
            low = middle + 1;
        else
            high = middle;
    }
    return low ? s->v[low - 1] : 0;
}

struct pi_tree_memory pi_host_memory_at(const struct pi_analysis *a, uint64_t ns)
{
    struct pi_tree_memory m = {0, 0};
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        uint64_t rss = latest(&p->rss, ns);
        if (!rss || p->end_ns < ns)
            continue;
        m.alive++;
        m.rss_bytes += rss;
    }
    return m;
}

void pi_host_memory_finish(struct pi_analysis *a)
{
    struct pi_host_memory *m = &a->host_memory;
    struct tree_peak rss = sum_peak(a, 0);
    m->rss_peak_bytes = rss.bytes;
    m->rss_peak_ns = rss.at_ns;
    m->processes_alive = rss.alive;
    uint32_t read_pss = 0, unread = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        read_pss += a->processes[i].pss.count > 0;
        unread += a->processes[i].pss.count == 0 && a->processes[i].rss.count > 0;
    }
    if (!read_pss) /* format 7 and older, or a kernel without smaps_rollup */
        return;
    struct tree_peak pss = sum_peak(a, 1);
    m->pss_peak_bytes = pss.bytes;
    m->pss_peak_ns = pss.at_ns;
    m->pss_processes_alive = pss.alive;
    m->pss_processes_unread = unread;
}
