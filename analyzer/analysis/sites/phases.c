/* phases.c - the phases of a process's life (see phases.h). */
#include "phases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"
#include "analysis/sites/call_sites.h"
#include "analysis/sites/python_time.h"

/* samples of one phase this close together make one band */
#define BAND_GAP_NS 250000000ull
/* samples kept per file, at most (24 MiB; 10 ms samples fill it in about 3 hours) */
#define MOMENTS_MAX (1u << 20)

const char *pi_phase_name(enum pi_phase phase)
{
    static const char *const names[PI_PHASE_COUNT] = {
        [PI_PHASE_STARTUP] = "start-up",       [PI_PHASE_IMPORTS] = "imports",
        [PI_PHASE_LOADING] = "loading",        [PI_PHASE_COMPILING] = "compiling",
        [PI_PHASE_WARMUP] = "warm-up steps",   [PI_PHASE_STEADY] = "steady steps",
        [PI_PHASE_EVALUATION] = "evaluation",  [PI_PHASE_CHECKPOINT] = "checkpoint saving",
        [PI_PHASE_SHUTDOWN] = "shutdown",      [PI_PHASE_RUNNING] = "running",
    };
    return phase < PI_PHASE_COUNT ? names[phase] : "?";
}

static struct pi_phases *phases_of(struct pi_process_info *p)
{
    if (!p->phases)
        p->phases = calloc(1, sizeof(*p->phases));
    return p->phases;
}

void pi_phases_event(struct pi_process_info *p, const struct pi_event *ev)
{
    struct pi_phases *ph = phases_of(p);
    if (!ph || ph->moment_count == MOMENTS_MAX ||
        pi_array_room(&ph->moments, &ph->moment_capacity, ph->moment_count, sizeof(*ph->moments),
                      1024) != 0)
        return; /* the rest of the file is left out of its phases */
    ph->moments[ph->moment_count++] =
        (struct pi_phase_moment){ev->ts_ns, ev->dur_ns, ev->rec.arg[0]};
}

static int ends_with(const char *text, const char *end)
{
    size_t n = strlen(text), m = strlen(end);
    return n >= m && strcmp(text + n - m, end) == 0;
}

/* The phase a stack says, or PI_PHASE_COUNT when it says none (the job's own work). */
static enum pi_phase phase_of_stack(const struct pi_call_site *site)
{
    enum pi_phase found = PI_PHASE_COUNT;
    for (size_t i = 0; i < site->python_count; i++) {
        const char *file = site->frames[i].file, *function = site->frames[i].function;
        if (!file || !function)
            continue;
        if (pi_python_import_frame(file))
            return PI_PHASE_IMPORTS; /* the first in rank: a module loading lazily anywhere */
        enum pi_phase here = PI_PHASE_COUNT;
        /* dynamo's callback on a frame it has no code for, and the compilers below it; not
         * torch.compile() making that callback (convert_frame) */
        if ((ends_with(file, "torch/_dynamo/convert_frame.py") ||
             ends_with(file, "torch/_inductor/compile_fx.py")) &&
            (strstr(function, "compile") || ends_with(function, "__call__")))
            here = PI_PHASE_COMPILING;
        else if ((ends_with(file, "torch/serialization.py") && strcmp(function, "save") == 0) ||
                 ends_with(function, "save_pretrained") || ends_with(function, "_save_checkpoint"))
            here = PI_PHASE_CHECKPOINT;
        else if ((ends_with(file, "torch/serialization.py") && strcmp(function, "load") == 0) ||
                 ends_with(function, "from_pretrained") ||
                 (ends_with(file, "safetensors/torch.py") && strcmp(function, "load_file") == 0))
            here = PI_PHASE_LOADING;
        else if (ends_with(file, "transformers/trainer.py") &&
                 (ends_with(function, "Trainer.evaluate") ||
                  ends_with(function, "Trainer.evaluation_loop") ||
                  ends_with(function, "Trainer.predict")))
            here = PI_PHASE_EVALUATION;
        if (here < found) /* compiling, then saving, loading, evaluating */
            found = here;
    }
    return found;
}

/* Whether @ns falls in one of the evaluation loops the caller found. */
static int in_evaluation(const struct pi_step_bounds *steps, uint64_t ns)
{
    for (size_t i = 0; i < steps->evaluation_count; i++)
        if (ns >= steps->evaluation[i].start_ns && ns <= steps->evaluation[i].end_ns)
            return 1;
    return 0;
}

/* The phase of a sample that no stack named, by when it came against the steps. */
static enum pi_phase phase_by_steps(const struct pi_step_bounds *steps, uint64_t ns)
{
    if (!steps->last_end_ns)
        return PI_PHASE_RUNNING;
    if (ns <= steps->first_start_ns)
        return PI_PHASE_STARTUP;
    if (ns > steps->last_end_ns)
        return PI_PHASE_SHUTDOWN;
    if (ns <= steps->steady_start_ns)
        return PI_PHASE_WARMUP;
    return PI_PHASE_STEADY;
}

static void add_band(struct pi_phases *ph, enum pi_phase phase, uint64_t start, uint64_t end)
{
    struct pi_phase_band *last = ph->band_count ? &ph->bands[ph->band_count - 1] : NULL;
    if (last && last->phase == phase && start <= last->end_ns + BAND_GAP_NS) {
        if (end > last->end_ns)
            last->end_ns = end;
        return;
    }
    if (ph->band_count == PI_PHASE_BANDS_MAX ||
        pi_array_room(&ph->bands, &ph->band_capacity, ph->band_count, sizeof(*ph->bands), 64) != 0) {
        ph->bands_cut = 1;
        return;
    }
    ph->bands[ph->band_count++] = (struct pi_phase_band){start, end, phase};
}

/* The user's line that called what is compiled: the first frame outside torch and Python's
 * own frozen modules, outward of dynamo's and inductor's frames, into @out; 0 when the
 * stack has none (a deep one, cut at its outer end). */
static int compiled_from(const struct pi_call_site *site, char *out, size_t size)
{
    size_t inner = 0;
    for (size_t i = 0; i < site->python_count; i++) {
        const char *file = site->frames[i].file;
        if (file && (strstr(file, "torch/_dynamo/") || strstr(file, "torch/_inductor/")))
            inner = i + 1;
    }
    for (size_t i = inner; i < site->python_count; i++) {
        const struct pi_site_frame *f = &site->frames[i];
        if (!f->file || strncmp(f->file, "torch/", 6) == 0 || strstr(f->file, "/torch/") ||
            strncmp(f->file, "<frozen", 7) == 0)
            continue;
        pi_call_site_frame_text(f, out, size);
        return 1;
    }
    return 0;
}

/* Each compilation's line where none was found, and whether it compiled again a frame (where
 * the compile calls name it) or a line compiled before; the compile calls are let go. */
static void settle_compilations(struct pi_phases *ph)
{
    for (size_t k = 0; k < ph->compilation_count; k++) {
        struct pi_compilation *c = &ph->compilations[k];
        if (!c->line[0] && !c->frame[0]) /* a compile call needs no sampled line to be named */
            snprintf(c->line, sizeof(c->line), "(its caller was not in the samples' stacks)");
        c->again = 0;
        for (size_t j = 0; j < k && !c->again; j++)
            c->again = c->frame[0] ? strcmp(ph->compilations[j].frame, c->frame) == 0
                                   : strcmp(ph->compilations[j].line, c->line) == 0;
    }
    free(ph->compile_calls);
    ph->compile_calls = NULL;
    ph->compile_call_count = ph->compile_call_capacity = 0;
}

/* A compiling sample: the compilation under way goes on, or a new one starts. */
static void add_compiling(struct pi_phases *ph, const struct pi_reader *reader, uint64_t stack,
                          uint64_t start, uint64_t end, uint64_t dur, uint64_t other_since)
{
    struct pi_compilation *c =
        ph->compilation_count ? &ph->compilations[ph->compilation_count - 1] : NULL;
    if (!c || other_since >= PI_COMPILE_GAP_NS) {
        if (pi_array_room(&ph->compilations, &ph->compilation_capacity, ph->compilation_count,
                          sizeof(*ph->compilations), 16) != 0)
            return;
        c = &ph->compilations[ph->compilation_count++];
        memset(c, 0, sizeof(*c));
        c->start_ns = start;
    }
    if (!c->line[0]) { /* the first of its samples whose stack reaches the user's code */
        struct pi_call_site *site = pi_call_site_read(reader, stack);
        if (site)
            compiled_from(site, c->line, sizeof(c->line));
        pi_call_site_free(site);
    }
    c->end_ns = end;
    c->compiling_ns += dur;
}

void pi_phases_compile_call(struct pi_process_info *p, const struct pi_event *ev)
{
    if (PI_SPAN_KIND(ev->rec.arg[0]) != PI_SPAN_COMPILE)
        return;
    struct pi_phases *ph = phases_of(p);
    if (!ph || pi_array_room(&ph->compile_calls, &ph->compile_call_capacity,
                             ph->compile_call_count, sizeof(*ph->compile_calls), 16) != 0)
        return;
    uint64_t end = ev->dur_ns <= UINT64_MAX - ev->ts_ns ? ev->ts_ns + ev->dur_ns : UINT64_MAX;
    ph->compile_calls[ph->compile_call_count++] =
        (struct pi_compile_call){ev->ts_ns, end, PI_SPAN_NAME(ev->rec.arg[0])};
}

static int by_start(const void *x, const void *y)
{
    const struct pi_compile_call *a = x, *b = y;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return a->end_ns > b->end_ns ? -1 : a->end_ns < b->end_ns; /* the outer one first */
}

/* The user's line of the sampled compilation of @sampled that overlaps @c, "" when none. */
static const char *sampled_line(const struct pi_compilation *sampled, size_t count,
                                const struct pi_compile_call *c)
{
    for (size_t k = 0; k < count; k++)
        if (sampled[k].start_ns < c->end_ns && c->start_ns <= sampled[k].end_ns)
            return sampled[k].line;
    return "";
}

/* The compile calls, where any came, are the compilations: each outermost one (a frame
 * compiled while another is, is part of it), in time order. */
static void compilations_from_calls(struct pi_phases *ph, const struct pi_reader *reader)
{
    if (!ph->compile_call_count)
        return;
    qsort(ph->compile_calls, ph->compile_call_count, sizeof(*ph->compile_calls), by_start);
    struct pi_compilation *made = calloc(ph->compile_call_count, sizeof(*made));
    if (!made)
        return; /* the sampled ones stay */
    size_t n = 0;
    uint64_t covered = 0;
    for (size_t i = 0; i < ph->compile_call_count; i++) {
        const struct pi_compile_call *c = &ph->compile_calls[i];
        if (n && c->end_ns <= covered)
            continue; /* inside the one before */
        struct pi_compilation *m = &made[n++];
        m->start_ns = c->start_ns;
        m->end_ns = c->end_ns;
        m->compiling_ns = c->end_ns - c->start_ns;
        const char *name = pi_reader_string(reader, c->name);
        snprintf(m->frame, sizeof(m->frame), "%s", name ? name : "?");
        snprintf(m->line, sizeof(m->line), "%s",
                 sampled_line(ph->compilations, ph->compilation_count, c));
        covered = c->end_ns;
    }
    free(ph->compilations);
    ph->compilations = made;
    ph->compilation_count = ph->compilation_capacity = n;
}

void pi_phases_finish_file(struct pi_process_info *p, const struct pi_reader *reader,
                           const struct pi_step_bounds *steps)
{
    struct pi_phases *ph = p->phases;
    if (!ph)
        return;
    /* stack -> its phase + 1; none without samples (the compile calls still make the
     * compilations) */
    struct pi_u64_map *by_stack = ph->moment_count ? pi_u64_map_new() : NULL;
    uint64_t other_since = 0; /* work since the last compiling sample */
    for (size_t i = 0; by_stack && i < ph->moment_count; i++) {
        const struct pi_phase_moment *m = &ph->moments[i];
        enum pi_phase phase = PI_PHASE_COUNT;
        if (m->stack) {
            struct pi_u64_entry *e = pi_u64_map_put(by_stack, m->stack);
            if (e && !e->value[0]) {
                struct pi_call_site *site = pi_call_site_read(reader, m->stack);
                e->value[0] = (site && site->python_count ? phase_of_stack(site) : PI_PHASE_COUNT) + 1;
                pi_call_site_free(site);
            }
            if (e)
                phase = (enum pi_phase)(e->value[0] - 1);
        }
        if (phase == PI_PHASE_COUNT && in_evaluation(steps, m->ns))
            phase = PI_PHASE_EVALUATION; /* a no_grad loop between training steps */
        if (phase == PI_PHASE_COUNT)
            phase = phase_by_steps(steps, m->ns);
        uint64_t start = m->ns > m->dur_ns ? m->ns - m->dur_ns : m->ns;
        ph->ns[phase] += m->dur_ns;
        ph->sampled_ns += m->dur_ns;
        add_band(ph, phase, start, m->ns);
        if (phase == PI_PHASE_COMPILING) {
            add_compiling(ph, reader, m->stack, start, m->ns, m->dur_ns, other_since);
            other_since = 0;
        } else if (phase != PI_PHASE_IMPORTS) { /* a module loaded while compiling is of it */
            other_since += m->dur_ns;
        }
    }
    pi_u64_map_free(by_stack);
    compilations_from_calls(ph, reader);
    settle_compilations(ph);
    free(ph->moments);
    ph->moments = NULL;
    ph->moment_count = ph->moment_capacity = 0;
}

void pi_phases_free(struct pi_process_info *p)
{
    struct pi_phases *ph = p->phases;
    if (!ph)
        return;
    free(ph->moments);
    free(ph->bands);
    free(ph->compilations);
    free(ph->compile_calls);
    free(ph);
    p->phases = NULL;
}
