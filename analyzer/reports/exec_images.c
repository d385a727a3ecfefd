/* exec_images.c - chains of execs, by one sort of the processes (see exec_images.h). */
#include "exec_images.h"

#include <stdlib.h>
#include <string.h>

static const char *host_of(const struct pi_process_info *p)
{
    return p->host ? p->host : "";
}

/* The same process: pid, namespace and host. */
static int same_process(const struct pi_process_info *p, const struct pi_process_info *q)
{
    return p->header.pid == q->header.pid && p->header.pid_ns == q->header.pid_ns &&
           strcmp(host_of(p), host_of(q)) == 0;
}

/* By process, then by start. */
static int by_process_then_start(const void *x, const void *y)
{
    const struct pi_process_info *p = *(const struct pi_process_info *const *)x;
    const struct pi_process_info *q = *(const struct pi_process_info *const *)y;
    if (p->header.pid != q->header.pid)
        return p->header.pid < q->header.pid ? -1 : 1;
    if (p->header.pid_ns != q->header.pid_ns)
        return p->header.pid_ns < q->header.pid_ns ? -1 : 1;
    int host = strcmp(host_of(p), host_of(q));
    if (host)
        return host;
    uint64_t a = p->header.start_monotonic_ns, b = q->header.start_monotonic_ns;
    return (a > b) - (a < b);
}

struct pi_exec_image *pi_exec_images(const struct pi_analysis *a)
{
    size_t n = a->process_count;
    struct pi_exec_image *places = calloc(n ? n : 1, sizeof(*places));
    const struct pi_process_info **sorted = malloc((n ? n : 1) * sizeof(*sorted));
    if (!places || !sorted) {
        free(places);
        free(sorted);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = &a->processes[i];
    qsort(sorted, n, sizeof(*sorted), by_process_then_start);
    for (size_t first = 0, end; first < n; first = end) {
        for (end = first + 1; end < n && same_process(sorted[first], sorted[end]); end++)
            ;
        if (end - first < 2)
            continue;
        /* an image's index: the chain's images that started strictly before it */
        size_t index = 0;
        for (size_t k = first; k < end; k++) {
            if (k > first && sorted[k]->header.start_monotonic_ns !=
                                 sorted[k - 1]->header.start_monotonic_ns)
                index = k - first;
            struct pi_exec_image *place = &places[sorted[k] - a->processes];
            place->index = index;
            place->images = end - first;
        }
    }
    free(sorted);
    return places;
}
