/*
 * verdict_tokenizer.c - requests that wait for their tokenizer: a slow
 * (pure Python) tokenizer, or inputs tokenized one at a time, can take as
 * long as the model itself, and no faster model helps it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/host/requests.h"
#include "verdict.h"

/* tokenizing this share of the requests' time */
#define TOKENIZING_SAID_SHARE 0.25

int pi_verdict_tokenizer_bound(const struct pi_loop *l, struct pi_finding *f)
{
    const struct pi_requests *q = l->requests;
    if (!q || !q->latency.total_ns)
        return 0;
    double tokenizing = (double)q->part_ns[PI_REQUEST_TOKENIZING];
    double share = tokenizing / (double)q->latency.total_ns;
    if (share < TOKENIZING_SAID_SHARE)
        return 0;
    f->kind = "tokenizer-bound";
    f->score = share;
    f->pid = l->process->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "pid %d spent %.0f%% of its %" PRIu64 " requests' time tokenizing: %.2f ms at the "
             "median request, against %.2f ms in the model",
             f->pid, 100 * share, q->latency.count, q->part_p50_ns[PI_REQUEST_TOKENIZING] / 1e6,
             q->part_p50_ns[PI_REQUEST_MODEL] / 1e6);
    snprintf(f->advice, sizeof(f->advice),
             "a fast (Rust) tokenizer: AutoTokenizer.from_pretrained(..., use_fast=True), or "
             "the Fast class of the model's tokenizer; several inputs tokenized in one call (a "
             "batch of requests, a pipeline's batch_size); no padding to a fixed length where "
             "the model does not need it");
    pi_finding_evidence(f, "tokenizing_share", share, "");
    pi_finding_evidence(f, "tokenizing_s", tokenizing / 1e9, "s");
    pi_finding_evidence(f, "median_tokenizing_s", q->part_p50_ns[PI_REQUEST_TOKENIZING] / 1e9, "s");
    pi_finding_evidence(f, "median_model_s", q->part_p50_ns[PI_REQUEST_MODEL] / 1e9, "s");
    pi_finding_evidence(f, "requests_s", (double)q->latency.total_ns / 1e9, "s");
    return 1;
}
