/*
 * verdict_tokens.c - generate() requests whose tokens wait for the host's
 * own work between forward passes: sampling, logits processors, stopping
 * checks, the streamer, the Python around them. With a small model, or on
 * a GPU that runs each pass fast, that overhead per token can take as long
 * as the model; the cure is fewer Python steps per token, not a faster
 * model.
 */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/host/requests.h"
#include "verdict.h"

/* the generate() calls' time outside their forward passes, this share of the requests' time */
#define OUTSIDE_MODEL_SAID_SHARE 0.25

int pi_verdict_token_overhead(const struct pi_loop *l, struct pi_finding *f)
{
    const struct pi_requests *q = l->requests;
    if (!q || !q->latency.total_ns || !q->generate.calls || q->generate.tokens < 2)
        return 0;
    const struct pi_request_generate *g = &q->generate;
    double outside = (double)pi_requests_outside_model_ns(q);
    double share = outside / (double)q->latency.total_ns;
    if (share < OUTSIDE_MODEL_SAID_SHARE)
        return 0;
    double tokens = (double)g->tokens, model = (double)(g->prefill_ns + g->decode_ns);
    f->kind = "token-overhead";
    f->score = share;
    f->pid = l->process->header.pid;
    snprintf(f->summary, sizeof(f->summary),
             "pid %d's generate() calls spent %.0f%% of its requests' time outside the model's "
             "forward passes: %.2f ms a token between passes (sampling, logits processors, "
             "stopping checks, the streamer), against %.2f ms a token in the model, over %" PRIu64
             " tokens in %" PRIu64 " calls",
             f->pid, 100 * share, outside / tokens / 1e6, model / tokens / 1e6, g->tokens,
             g->calls);
    snprintf(f->advice, sizeof(f->advice),
             "fewer host steps per token: a static KV cache with the decode step compiled "
             "(cache_implementation=\"static\", torch.compile; on a GPU mode=\"reduce-overhead\" "
             "runs it as CUDA graphs), greedy decoding or fewer logits processors, a streamer "
             "that does little per token; or several requests generated as one batch, which "
             "shares this cost among them");
    pi_finding_evidence(f, "outside_model_share", share, "");
    pi_finding_evidence(f, "outside_model_s", outside / 1e9, "s");
    pi_finding_evidence(f, "outside_model_per_token_s", outside / tokens / 1e9, "s");
    pi_finding_evidence(f, "model_per_token_s", model / tokens / 1e9, "s");
    pi_finding_evidence(f, "tokens", tokens, "");
    pi_finding_evidence(f, "requests_s", (double)q->latency.total_ns / 1e9, "s");
    return 1;
}
