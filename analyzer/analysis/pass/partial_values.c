/* partial_values.c - the model's small shared structures in a partial file (see partial_values.h). */
#include "partial_values.h"

#include <stdlib.h>

#include "analysis/pass/partial_parts.h"
#include "analysis/sites/call_sites.h"

void pi_partial_histogram(struct pi_codec *c, struct pi_histogram *h)
{
    pi_codec_u64(c, &h->count);
    pi_codec_u64(c, &h->sum);
    pi_codec_u64(c, &h->min);
    pi_codec_u64(c, &h->max);
    /* the buckets held: none, or [lo, hi) */
    int has = h->counts != NULL;
    pi_codec_int(c, &has);
    pi_codec_u32(c, &h->lo);
    pi_codec_u32(c, &h->hi);
    /* the reports turn bucket indices into values: none past the last a value can have */
    if (c->reading && (h->hi < h->lo || (has && h->hi == h->lo) || h->hi - h->lo > c->left ||
                       h->hi > pi_histogram_bucket_of(UINT64_MAX) + 1))
        pi_codec_fail(c, "histogram buckets out of range");
    if (c->reading)
        h->counts = NULL;
    if (has && !c->failed) {
        if (c->reading && !(h->counts = calloc(h->hi - h->lo, sizeof(*h->counts))))
            pi_codec_fail(c, "out of memory");
        if (h->counts)
            pi_codec_u64s(c, h->counts, h->hi - h->lo);
    }
    if (c->reading && !h->counts)
        h->lo = h->hi = 0;
    /* every value is in a bucket; and a quantile's position, a double, must convert back to
     * the count's type (past 2^53 it may round up beyond it) */
    uint64_t total = 0;
    int over = 0;
    for (uint32_t i = 0; c->reading && !c->failed && h->counts && i < h->hi - h->lo; i++)
        over |= __builtin_add_overflow(total, h->counts[i], &total);
    if (c->reading && !c->failed && (over || total != h->count || h->count > (1ull << 53)))
        pi_codec_fail(c, "histogram counts that do not add up");
    pi_codec_int(c, &h->exact);
    pi_codec_int(c, &h->sorted);
    if (ARRAY(c, h->values, h->value_count))
        pi_codec_u64s(c, h->values, h->value_count);
    if (c->reading)
        h->values_capacity = h->value_count;
}

static void frame(struct pi_codec *c, struct pi_site_frame *f)
{
    pi_codec_int(c, &f->python);
    pi_codec_str(c, &f->file);
    pi_codec_str(c, &f->function);
    pi_codec_u32(c, &f->line);
    pi_codec_str(c, &f->module);
    pi_codec_str(c, &f->build_id);
    pi_codec_u64(c, &f->offset);
    pi_codec_int(c, &f->has_offset);
    pi_codec_str(c, &f->symbol);
    pi_codec_u64(c, &f->symbol_offset);
    pi_codec_int(c, &f->has_symbol_offset);
    /* the reader names every frame ("?" where a name is unknown), and the reports rely on it */
    if (c->reading && (f->python ? !f->file || !f->function : !f->module || !f->build_id))
        pi_codec_fail(c, "a frame without its names");
}

void pi_partial_call_site(struct pi_codec *c, struct pi_call_site **site)
{
    if (!PRESENT(c, *site))
        return;
    struct pi_call_site *s = *site;
    for (size_t i = 0, n = ARRAY(c, s->frames, s->count); i < n; i++)
        frame(c, &s->frames[i]);
    pi_codec_size(c, &s->python_count);
    if (c->reading && s->python_count > s->count)
        pi_codec_fail(c, "a call site's frames out of range");
    pi_codec_str(c, &s->headline);
    pi_codec_str(c, &s->text);
}

void pi_partial_series(struct pi_codec *c, struct pi_series *s)
{
    size_t n = s->count;
    pi_codec_count(c, &n, PI_SERIES_MAX, 2);
    if (c->reading) { /* one block, as series.c keeps it: the times, then the values */
        s->t = s->v = NULL;
        s->capacity = 0;
        if (n && !(s->t = malloc(2 * n * sizeof(*s->t)))) {
            pi_codec_fail(c, "out of memory");
            n = 0;
        }
        s->v = s->t ? s->t + n : NULL;
        s->capacity = (uint32_t)n;
    }
    s->count = (uint32_t)n;
    if (s->count) {
        pi_codec_u64s(c, s->t, s->count);
        pi_codec_u64s(c, s->v, s->count);
    }
    pi_codec_u32(c, &s->stride);
    pi_codec_u32(c, &s->pending);
}
