/* kernel_labels.c - see kernel_labels.h. */
#include "kernel_labels.h"

#include <stdlib.h>
#include <string.h>

int pi_kernel_entry(const struct pi_latency_entry *e)
{
    return strcmp(e->group, "kernel") == 0 ||
           (strcmp(e->group, "gpu") == 0 && strcmp(e->detail, "kernel") == 0);
}

void pi_kernel_labels_make(const struct pi_analysis *a, struct pi_kernel_labels *l)
{
    memset(l, 0, sizeof(*l));
    size_t n;
    struct pi_latency_entry **all = pi_latency_sorted(&a->calls, NULL, &n);
    l->full = calloc(n ? n : 1, sizeof(*l->full));
    for (size_t i = 0; all && l->full && i < n; i++) {
        if (!pi_kernel_entry(all[i]))
            continue;
        int seen = 0;
        for (size_t j = 0; j < l->count && !seen; j++)
            seen = strcmp(l->full[j], all[i]->name) == 0;
        if (!seen)
            l->full[l->count++] = all[i]->name;
    }
    free(all);
    l->short_names = l->full ? calloc(l->count ? l->count : 1, sizeof(*l->short_names)) : NULL;
    if (l->short_names)
        pi_kernel_short_names(l->full, l->count, l->short_names);
    else
        l->count = 0;
}

const char *pi_kernel_label(const struct pi_kernel_labels *l, const char *full)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->full[i], full) == 0)
            return l->short_names[i];
    return full;
}

void pi_kernel_labels_free(struct pi_kernel_labels *l)
{
    free(l->full);
    free(l->short_names);
    memset(l, 0, sizeof(*l));
}
