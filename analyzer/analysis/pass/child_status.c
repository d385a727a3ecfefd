/* child_status.c - see child_status.h. */
#include "child_status.h"

#include <stdlib.h>

void pi_child_status_add(struct pi_process_info *p, uint32_t pid, uint32_t status, uint64_t ns)
{
    if (p->reaped_count == p->reaped_capacity) {
        size_t capacity = p->reaped_capacity ? 2 * p->reaped_capacity : 8;
        struct pi_child_status *grown = realloc(p->reaped, capacity * sizeof(*grown));
        if (!grown)
            return;
        p->reaped = grown;
        p->reaped_capacity = capacity;
    }
    p->reaped[p->reaped_count++] = (struct pi_child_status){pid, status, ns};
}

const struct pi_child_status *pi_child_status_of(const struct pi_analysis *a,
                                                 const struct pi_process_info *child)
{
    for (size_t i = 0; i < a->process_count; i++) {
        const struct pi_process_info *parent = &a->processes[i];
        if (parent->header.pid != child->header.ppid || parent == child)
            continue;
        /* a pid comes back once its process is reaped: the first reaping after its end */
        for (size_t k = 0; k < parent->reaped_count; k++)
            if (parent->reaped[k].pid == (uint32_t)child->header.pid &&
                parent->reaped[k].ns >= child->end_ns)
                return &parent->reaped[k];
    }
    return NULL;
}
