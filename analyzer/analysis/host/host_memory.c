/* host_memory.c - the process tree's concurrent RSS peak (see host_memory.h). */
#include "host_memory.h"

#include <stdlib.h>

#include "analysis/model/model.h"

struct change {
    uint64_t t;
    uint32_t process;
    uint64_t rss; /* the process's RSS from t on; 0 once it ended */
};

static int by_time(const void *a, const void *b)
{
    const struct change *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->rss < y->rss ? -1 : x->rss > y->rss; /* an end before a sample at the same time */
}

void pi_host_memory_finish(struct pi_analysis *a)
{
    size_t total = 0;
    for (size_t i = 0; i < a->process_count; i++)
        total += a->processes[i].rss.count + 1;
    struct change *changes = malloc((total ? total : 1) * sizeof(*changes));
    uint64_t *current = calloc(a->process_count ? a->process_count : 1, sizeof(*current));
    if (!changes || !current) {
        free(changes);
        free(current);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *p = &a->processes[i];
        for (uint32_t k = 0; k < p->rss.count; k++)
            changes[n++] = (struct change){p->rss.t[k], (uint32_t)i, p->rss.v[k]};
        if (p->rss.count)
            changes[n++] = (struct change){p->end_ns, (uint32_t)i, 0};
    }
    qsort(changes, n, sizeof(*changes), by_time);
    uint64_t sum = 0;
    uint32_t alive = 0;
    struct pi_host_memory *m = &a->host_memory;
    for (size_t k = 0; k < n; k++) {
        const struct change *c = &changes[k];
        alive += (current[c->process] == 0 && c->rss > 0) - (current[c->process] > 0 && c->rss == 0);
        sum = sum - current[c->process] + c->rss;
        current[c->process] = c->rss;
        if (sum > m->rss_peak_bytes) {
            m->rss_peak_bytes = sum;
            m->rss_peak_ns = c->t;
            m->processes_alive = alive;
        }
    }
    free(changes);
    free(current);
}
