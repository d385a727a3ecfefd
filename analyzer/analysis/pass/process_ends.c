/* process_ends.c - see process_ends.h. */
#include "process_ends.h"

#include <stdio.h>

size_t pi_processes_unended(const struct pi_analysis *a, char *pids, size_t size)
{
    size_t n = 0, used = 0;
    if (pids && size)
        pids[0] = '\0';
    for (size_t i = 0; i < a->process_count; i++) {
        if (!pi_process_unended(&a->processes[i]))
            continue;
        if (pids && used < size) {
            int w = snprintf(pids + used, size - used, "%s%d", n ? ", " : "",
                             a->processes[i].header.pid);
            used += w > 0 ? (size_t)w : 0;
        }
        n++;
    }
    return n;
}

size_t pi_files_cut_short(const struct pi_analysis *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->process_count; i++)
        n += a->processes[i].truncated != 0;
    return n;
}
