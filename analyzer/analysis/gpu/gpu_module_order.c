/* gpu_module_order.c - the module table's rows in tree order (see gpu_module_order.h). */
#include "gpu_module_order.h"

#include <stdlib.h>
#include <string.h>

static const struct pi_gpu_module *sort_rows;

static int by_gpu_time(const void *x, const void *y)
{
    const struct pi_gpu_module *a = &sort_rows[*(const size_t *)x],
                               *b = &sort_rows[*(const size_t *)y];
    return a->gpu_ns < b->gpu_ns ? 1 : a->gpu_ns > b->gpu_ns ? -1 : strcmp(a->path, b->path);
}

/* Whether row @child is a direct part of the module path @parent ("" for the outermost). */
static int child_of(const struct pi_gpu_module *child, const char *parent, unsigned depth)
{
    size_t n = strlen(parent);
    return child->depth == depth &&
           (n == 0 || (strncmp(child->path, parent, n) == 0 && child->path[n] == '/'));
}

/* Each path after its parent, siblings by GPU time: into @order from @at; the next free. */
static size_t tree_order(const struct pi_gpu_modules *m, const char *parent, unsigned depth,
                         size_t *order, size_t at, size_t *scratch)
{
    size_t n = 0;
    for (size_t i = 0; i < m->count; i++)
        if (child_of(&m->rows[i], parent, depth))
            scratch[n++] = i;
    size_t *mine = malloc((n ? n : 1) * sizeof(*mine));
    if (!mine)
        return at;
    memcpy(mine, scratch, n * sizeof(*mine));
    sort_rows = m->rows;
    qsort(mine, n, sizeof(*mine), by_gpu_time);
    for (size_t i = 0; i < n; i++) {
        order[at++] = mine[i];
        at = tree_order(m, m->rows[mine[i]].path, depth + 1, order, at, scratch);
    }
    free(mine);
    return at;
}

int pi_gpu_modules_sort(struct pi_gpu_modules *m)
{
    size_t *order = malloc((m->count ? m->count : 1) * sizeof(*order));
    size_t *scratch = malloc((m->count ? m->count : 1) * sizeof(*scratch));
    struct pi_gpu_module *sorted = malloc((m->count ? m->count : 1) * sizeof(*sorted));
    if (!order || !scratch || !sorted) {
        free(order);
        free(scratch);
        free(sorted);
        return -1;
    }
    size_t placed = tree_order(m, "", 0, order, 0, scratch);
    for (size_t i = 0; i < placed; i++)
        sorted[i] = m->rows[order[i]];
    for (size_t i = 0; i < m->count; i++) { /* none is left out, but should one be: freed */
        int kept = 0;
        for (size_t j = 0; j < placed && !kept; j++)
            kept = order[j] == i;
        if (!kept)
            free(m->rows[i].path);
    }
    free(m->rows);
    m->rows = sorted; /* each name still points into its own path */
    m->count = placed;
    free(order);
    free(scratch);
    return 0;
}
