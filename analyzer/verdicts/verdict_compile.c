/*
 * verdict_compile.c - a job that spent much of its time compiling
 * (torch.compile: dynamo tracing, inductor's code generation, their lazy
 * backward compile) says so, and says it first where compiling took most
 * of the main thread's time outside imports: the steady figures after it
 * are the job's speed, the compiling is what it paid to get there. The
 * compilations at a line compiled before (a new input shape, a guard that
 * failed) are named: they are the ones a user can avoid.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/host/spans.h"
#include "analysis/sites/phases.h"
#include "verdict.h"

/* compiling this share of the main thread's time outside imports is a finding; this one
 * ranks it before the pace findings */
#define COMPILING_SAID_SHARE 0.25
#define COMPILING_FIRST_SHARE 0.5

/* Dynamo's own words on why it compiled a frame again (the compilations' spans' notes): the
 * first of them and how many there were, in @out; "" where it said none. */
static void dynamo_reasons(const struct pi_process_info *p, char *out, size_t size)
{
    const struct pi_span_note *first = NULL;
    size_t count = 0;
    for (size_t i = 0; p->spans && i < p->spans->note_count; i++)
        if (p->spans->notes[i].kind == PI_SPAN_COMPILE) {
            first = first ? first : &p->spans->notes[i];
            count++;
        }
    out[0] = '\0';
    if (first)
        snprintf(out, size, "; dynamo compiled again %zu time%s, first because %s (%s)", count,
                 count == 1 ? "" : "s", first->text ? first->text : "?",
                 first->name ? first->name : "?");
}

int pi_verdict_compiling(const struct pi_process_info *p, struct pi_finding *f)
{
    const struct pi_phases *ph = p ? p->phases : NULL;
    if (!ph || !ph->compilation_count)
        return 0;
    double outside_imports = (double)(ph->sampled_ns - ph->ns[PI_PHASE_IMPORTS]);
    double compiling = (double)ph->ns[PI_PHASE_COMPILING];
    double share = outside_imports > 0 ? compiling / outside_imports : 0;
    if (share < COMPILING_SAID_SHARE)
        return 0;
    const struct pi_compilation *longest = &ph->compilations[0], *longest_again = NULL;
    size_t again = 0;
    double again_ns = 0;
    for (size_t k = 0; k < ph->compilation_count; k++) {
        const struct pi_compilation *c = &ph->compilations[k];
        if (c->end_ns - c->start_ns > longest->end_ns - longest->start_ns)
            longest = c;
        if (!c->again)
            continue;
        again++;
        again_ns += (double)c->compiling_ns;
        if (!longest_again || c->compiling_ns > longest_again->compiling_ns)
            longest_again = c;
    }
    f->kind = "compiling";
    f->score = share;
    f->pid = p->header.pid;
    f->ends_job = share >= COMPILING_FIRST_SHARE ? PI_RANKS_FIRST_OF_PACE : PI_ENDS_JOB_NOT;
    char recompiled[400] = "";
    if (longest_again)
        snprintf(recompiled, sizeof(recompiled),
                 "; compiling again cost %.2f s, the most at %s (%.2f s)", again_ns / 1e9,
                 longest_again->line, (double)longest_again->compiling_ns / 1e9);
    char reasons[700];
    dynamo_reasons(p, reasons, sizeof(reasons));
    snprintf(f->summary, sizeof(f->summary),
             "pid %d spent %.2f s compiling with torch.compile, %.0f%% of its main thread's "
             "time outside imports: %zu compilation%s, %zu of them again at a line compiled "
             "before (a new input shape or a guard that failed); the longest %.2f s at %s%s%s",
             f->pid, compiling / 1e9, 100 * share, ph->compilation_count,
             ph->compilation_count == 1 ? "" : "s", again,
             (double)(longest->end_ns - longest->start_ns) / 1e9, longest->line, recompiled,
             reasons);
    snprintf(f->line, sizeof(f->line), "%s", longest->line);
    snprintf(f->advice, sizeof(f->advice),
             "compiling is paid once per graph and input shape: where shapes change, mark them "
             "dynamic (torch._dynamo.mark_dynamic, torch.compile(dynamic=True)) or pad them to "
             "a few sizes; TORCH_LOGS=recompiles says why each recompilation happened, "
             "torch._dynamo.explain where the graph breaks; keep inductor's cache between runs "
             "(TORCHINDUCTOR_CACHE_DIR); judge the speed by the steps after the compiling");
    pi_finding_evidence(f, "compiling_s", compiling / 1e9, "s");
    pi_finding_evidence(f, "compiling_share", share, "");
    pi_finding_evidence(f, "compilations", (double)ph->compilation_count, "");
    pi_finding_evidence(f, "recompilations", (double)again, "");
    pi_finding_evidence(f, "recompiling_s", again_ns / 1e9, "s");
    pi_finding_evidence(f, "longest_compilation_s",
                        (double)(longest->end_ns - longest->start_ns) / 1e9, "s");
    return 1;
}
