/*
 * verdict_gc.c - a serving process whose requests wait for Python's
 * garbage collector. A full collection walks every object the process
 * keeps, and a loaded model keeps many (its modules, parameters, the
 * tokenizer's vocabulary): each one lands on whichever request allocates
 * at that moment, or between two of them. gc.freeze() after the load puts
 * those objects out of the collector's reach; said with the figures.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/host/requests.h"
#include "analysis/host/spans.h"
#include "verdict.h"

/* collecting this share of the serving loop's time (inside the requests and between them) */
#define COLLECTING_SAID_SHARE 0.05

/* the row of the collections of the oldest generation (full ones), NULL: none ran */
static const struct pi_span_row *full_collections(const struct pi_process_info *p)
{
    const struct pi_spans *s = p->spans;
    for (size_t i = 0; s && i < s->count; i++)
        if (s->rows[i].kind == PI_SPAN_GC && s->rows[i].name &&
            strstr(s->rows[i].name, "generation 2"))
            return &s->rows[i];
    return NULL;
}

int pi_verdict_collections(const struct pi_loop *l, struct pi_finding *f)
{
    const struct pi_requests *q = l->requests;
    if (!q || !q->latency.total_ns)
        return 0;
    double inside = (double)q->part_ns[PI_REQUEST_COLLECTING], between = (double)q->gc_between_ns;
    double total = (double)q->latency.total_ns + between;
    double share = (inside + between) / total;
    if (share < COLLECTING_SAID_SHARE)
        return 0;
    const struct pi_span_row *full = full_collections(l->process);
    f->kind = "gc-bound";
    f->score = share;
    f->pid = l->process->header.pid;
    char fulls[200] = "";
    if (full)
        snprintf(fulls, sizeof(fulls), "; over the process's life %" PRIu64 " full collection%s "
                 "(generation 2) took %.1f ms, %.1f ms each at the median, the longest %.1f ms", full->count,
                 full->count == 1 ? "" : "s", (double)full->total_ns / 1e6,
                 full->quantile_ns[0] / 1e6, full->quantile_ns[PI_SPAN_QUANTILE_COUNT - 1] / 1e6);
    snprintf(f->summary, sizeof(f->summary),
             "pid %d spent %.0f%% of %s in Python's garbage collection: %.1f ms inside its "
             "%" PRIu64 " requests (%.0f%% of their latency) and %.1f ms between them%s",
             f->pid, 100 * share, l->name, inside / 1e6, q->latency.count,
             100 * inside / (double)q->latency.total_ns, between / 1e6, fulls);
    snprintf(f->advice, sizeof(f->advice),
             "call gc.freeze() once the model is loaded, before serving: what the load made (the "
             "model's modules and parameters, the tokenizer's vocabulary) leaves the collector's "
             "reach, and a full collection no longer walks it; where young collections are "
             "frequent, a higher first threshold (gc.set_threshold); or gc.disable() and "
             "gc.collect() at moments no request waits");
    pi_finding_evidence(f, "gc_share", share, "");
    pi_finding_evidence(f, "gc_in_requests_s", inside / 1e9, "s");
    pi_finding_evidence(f, "gc_between_requests_s", between / 1e9, "s");
    pi_finding_evidence(f, "requests_s", (double)q->latency.total_ns / 1e9, "s");
    pi_finding_evidence(f, "full_collections", full ? (double)full->count : 0, "");
    pi_finding_evidence(f, "full_collections_s", full ? (double)full->total_ns / 1e9 : 0, "s");
    return 1;
}
