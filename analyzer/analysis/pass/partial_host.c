/* partial_host.c - a process's spans, requests, evaluation loops and sampled time (Python
 * lines, phases, native operators) in a partial file (see partial_parts.h). */
#include "partial_parts.h"

#include <stdlib.h>

#include "analysis/host/evaluation_loops.h"
#include "analysis/host/requests.h"
#include "analysis/host/spans.h"
#include "analysis/sites/native_time.h"
#include "analysis/sites/phases.h"
#include "analysis/sites/python_lines.h"

void pi_partial_spans(struct pi_codec *c, struct pi_spans **spans_of)
{
    if (!PRESENT(c, *spans_of))
        return;
    struct pi_spans *s = *spans_of;
    for (size_t i = 0, n = ARRAY(c, s->rows, s->count); i < n; i++) {
        struct pi_span_row *r = &s->rows[i];
        pi_codec_text(c, &r->name);
        pi_codec_uint(c, &r->kind);
        pi_codec_u64(c, &r->count);
        pi_codec_u64(c, &r->total_ns);
        pi_codec_u64(c, &r->cpu_ns);
        pi_codec_u64(c, &r->cpu_calls);
        pi_codec_i64(c, &r->device_bytes);
        pi_codec_i64(c, &r->host_bytes);
        pi_codec_u64(c, &r->host_calls);
        pi_codec_u64(c, &r->raised);
        pi_codec_u64(c, &r->threads);
        pi_codec_doubles(c, r->quantile_ns, PI_SPAN_QUANTILE_COUNT);
    }
    if (c->reading)
        s->capacity = s->count;
    pi_codec_u64(c, &s->unlisted_calls);
    for (size_t i = 0, n = ARRAY(c, s->notes, s->note_count); i < n; i++) {
        struct pi_span_note *note = &s->notes[i];
        pi_codec_u64(c, &note->start_ns);
        pi_codec_uint(c, &note->kind);
        pi_codec_u32(c, &note->name_id);
        pi_codec_u32(c, &note->text_id);
        pi_codec_text(c, &note->name);
        pi_codec_text(c, &note->text);
    }
    pi_codec_u64(c, &s->notes_unkept);
    pi_codec_str(c, &s->steps_name);
}

void pi_partial_evaluation_loops(struct pi_codec *c, struct pi_evaluation_loops **loops)
{
    if (!PRESENT(c, *loops))
        return;
    struct pi_evaluation_loops *e = *loops;
    for (size_t i = 0, n = ARRAY(c, e->loops, e->count); i < n; i++) {
        pi_codec_u64(c, &e->loops[i].start_ns);
        pi_codec_u64(c, &e->loops[i].end_ns);
        pi_codec_u64(c, &e->loops[i].forwards);
    }
    pi_codec_u64(c, &e->unkept);
    pi_codec_u64(c, &e->total_ns);
    pi_codec_int(c, &e->trained);
}

static void quantiles(struct pi_codec *c, struct pi_request_quantiles *q)
{
    pi_codec_u64(c, &q->count);
    pi_codec_u64(c, &q->total_ns);
    pi_codec_doubles(c, q->ns, PI_REQUEST_QUANTILE_COUNT);
}

void pi_partial_requests(struct pi_codec *c, struct pi_requests **requests_of)
{
    if (!PRESENT(c, *requests_of))
        return;
    struct pi_requests *r = *requests_of;
    pi_codec_str(c, &r->name);
    pi_codec_uint(c, &r->kind);
    pi_codec_u64(c, &r->first_start_ns);
    pi_codec_u64(c, &r->last_end_ns);
    pi_codec_u64(c, &r->threads);
    COUNT_OF(c, r->tid_count, PI_REQUEST_TIDS_KEPT);
    pi_codec_u32s(c, r->tids, r->tid_count);
    quantiles(c, &r->latency);
    U64S(c, r->part_ns);
    pi_codec_doubles(c, r->part_p50_ns, PI_REQUEST_PART_COUNT);
    pi_codec_u64(c, &r->sync_ns);
    pi_codec_u64(c, &r->gc_between_ns);
    pi_codec_u64(c, &r->cpu_ns);
    pi_codec_u64(c, &r->cpu_calls);
    COUNT_OF(c, r->slowest_count, PI_REQUEST_SLOWEST);
    for (unsigned i = 0; i < r->slowest_count; i++) {
        struct pi_request_slow *s = &r->slowest[i];
        pi_codec_u64(c, &s->start_ns);
        pi_codec_u64(c, &s->dur_ns);
        pi_codec_u32(c, &s->tid);
        U64S(c, s->part_ns);
        pi_codec_u64(c, &s->tokens);
        pi_codec_u64(c, &s->first_token_ns);
        pi_codec_int(c, &s->slow_part);
    }
    struct pi_request_generate *g = &r->generate;
    pi_codec_u64(c, &g->calls);
    pi_codec_u64(c, &g->tokens);
    pi_codec_u64(c, &g->total_ns);
    pi_codec_u64(c, &g->prefill_ns);
    pi_codec_u64(c, &g->decode_ns);
    pi_codec_u64(c, &g->requests);
    pi_codec_double(c, &g->tokens_p50);
    quantiles(c, &g->first_token);
    quantiles(c, &g->inter_token);
}

static void python_line(struct pi_codec *c, struct pi_python_line *l)
{
    pi_codec_str(c, &l->file);
    pi_codec_str(c, &l->function);
    pi_codec_u32(c, &l->line);
    pi_codec_u64(c, &l->ns);
    pi_codec_u64(c, &l->cpu_ns);
}

void pi_partial_python_lines(struct pi_codec *c, struct pi_python_lines **lines_of)
{
    if (!PRESENT(c, *lines_of))
        return;
    struct pi_python_lines *l = *lines_of;
    for (size_t i = 0, n = ARRAY(c, l->lines, l->count); i < n; i++)
        python_line(c, &l->lines[i]);
    if (c->reading)
        l->capacity = l->count;
    pi_codec_u64(c, &l->sampled_ns);
    pi_codec_u64(c, &l->sampled_cpu_ns);
    pi_codec_u64(c, &l->cpu_unknown_ns);
    pi_codec_u64(c, &l->last_stack);
    pi_codec_u64(c, &l->last_ns);
    python_line(c, &l->last);
}

void pi_partial_phases(struct pi_codec *c, struct pi_phases **phases_of)
{
    if (!PRESENT(c, *phases_of))
        return;
    struct pi_phases *ph = *phases_of;
    pi_codec_u64s(c, ph->ns, PI_PHASE_COUNT);
    pi_codec_u64(c, &ph->sampled_ns);
    for (size_t i = 0, n = ARRAY(c, ph->bands, ph->band_count); i < n; i++) {
        unsigned phase = ph->bands[i].phase;
        pi_codec_u64(c, &ph->bands[i].start_ns);
        pi_codec_u64(c, &ph->bands[i].end_ns);
        pi_codec_uint(c, &phase);
        if (c->reading && phase >= PI_PHASE_COUNT)
            pi_codec_fail(c, "a phase out of range");
        ph->bands[i].phase = (enum pi_phase)phase;
    }
    pi_codec_int(c, &ph->bands_cut);
    for (size_t i = 0, n = ARRAY(c, ph->compilations, ph->compilation_count); i < n; i++) {
        struct pi_compilation *k = &ph->compilations[i];
        pi_codec_u64(c, &k->start_ns);
        pi_codec_u64(c, &k->end_ns);
        pi_codec_u64(c, &k->compiling_ns);
        pi_codec_chars(c, k->line, sizeof(k->line));
        pi_codec_chars(c, k->frame, sizeof(k->frame));
        pi_codec_int(c, &k->again);
    }
    if (c->reading) {
        ph->band_capacity = ph->band_count;
        ph->compilation_capacity = ph->compilation_count;
    }
}

void pi_partial_native_time(struct pi_codec *c, struct pi_native_time **native_of)
{
    if (!PRESENT(c, *native_of))
        return;
    struct pi_native_time *t = *native_of;
    for (size_t i = 0, n = ARRAY(c, t->operators, t->count); i < n; i++) {
        pi_codec_u32(c, &t->operators[i].tid);
        pi_codec_text(c, &t->operators[i].name);
        pi_codec_u64(c, &t->operators[i].ns);
        pi_codec_u64(c, &t->operators[i].samples);
        pi_codec_u64(c, &t->operators[i].steady_ns);
    }
    if (c->reading)
        t->capacity = t->count;
    pi_codec_u64(c, &t->sampled_ns);
    pi_codec_u64(c, &t->samples);
    pi_codec_u64(c, &t->unnamed_ns);
    pi_codec_u64(c, &t->profiler_ns);
    pi_codec_u64(c, &t->loader_ns);
    pi_codec_u64(c, &t->lost_ns);
    pi_codec_int(c, &t->moments_full);
    pi_codec_int(c, &t->steady_known);
}
