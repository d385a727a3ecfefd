/* gpu_timing.c - how GPU time was measured, chosen in file order (see gpu_timing.h). */
#include "gpu_timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/gpu/gpu_analysis.h"

void pi_gpu_timing_keep(struct pi_gpu_memory *m, int source, const char *reason)
{
    reason = reason ? reason : "";
    if (m->timing_note_count) {
        const struct pi_gpu_timing_note *last = &m->timing_notes[m->timing_note_count - 1];
        /* taking the same choice twice leaves it as once: a file may repeat its record */
        if (last->source == source && strcmp(last->reason, reason) == 0)
            return;
    }
    if (pi_array_room(&m->timing_notes, &m->timing_note_capacity, m->timing_note_count,
                      sizeof(*m->timing_notes), 2) != 0)
        return;
    char *copy = strdup(reason);
    if (copy)
        m->timing_notes[m->timing_note_count++] = (struct pi_gpu_timing_note){source, copy};
}

void pi_gpu_timing_settle(struct pi_analysis *a, struct pi_process_info *p)
{
    struct pi_gpu_memory *m = p->gpu;
    for (size_t i = 0; m && i < m->timing_note_count; i++) {
        const struct pi_gpu_timing_note *n = &m->timing_notes[i];
        if (a->gpu.timing_source < n->source || a->gpu.timing_reason[0] == '\0') {
            a->gpu.timing_source = n->source;
            snprintf(a->gpu.timing_reason, sizeof(a->gpu.timing_reason), "%s", n->reason);
        }
    }
    if (m)
        pi_gpu_timing_free(m);
}

void pi_gpu_timing_free(struct pi_gpu_memory *m)
{
    for (size_t i = 0; i < m->timing_note_count; i++)
        free(m->timing_notes[i].reason);
    free(m->timing_notes);
    m->timing_notes = NULL;
    m->timing_note_count = m->timing_note_capacity = 0;
}
