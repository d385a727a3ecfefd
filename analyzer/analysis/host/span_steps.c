/*
 * span_steps.c - training steps from optimizer steps and backward calls
 * (see span_steps.h).
 *
 * Which thread runs the loop is known only once the file is read, so every
 * thread that makes the calls a step is made of keeps both candidates as
 * they go: one step per optimizer step, one per backward call, each a
 * struct pi_steps that takes GPU work and waits by their time like the
 * read-back source's. At the end the thread with the most optimizer steps
 * gives the steps (else the one with the most backward calls), the others
 * are let go. A loop has a thread or two that make such calls, and the
 * steps are few next to the events. A thread's steps take GPU work and
 * waits once it is the main thread or makes such a call (a thread other
 * than the main one that starts the loop later loses those of its first
 * step that came before: a warm-up step's), never while it only runs a
 * model: an inference server's many threads would each keep a copy.
 */
#include "span_steps.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"
#include "analysis/host/evaluation_loops.h"
#include "analysis/host/held_call.h"
#include "analysis/host/spans.h"
#include "analysis/host/steps.h"

/* Threads past this many are not followed for steps (a loop runs on one). */
#define SPAN_STEP_THREADS 16
/* Names of the calls that end a thread's steps, counted to name the source ("AdamW.step"). */
#define STEP_NAMES 8

/* A thread's steps by one kind of call (optimizer steps, or backward calls). */
struct step_source {
    struct pi_steps steps;
    struct pi_held_call held;     /* its latest outermost call, until the next one shows it was */
    int started;          /* a call of its kind came: first_start is settled */
    uint64_t first_start; /* where its first step starts if before that call, UINT64_MAX: none */
    uint64_t last_end;    /* where its last recorded step ended, 0: none */
    uint64_t calls;       /* its outermost calls: its steps */
    struct step_name {
        uint32_t id;
        uint64_t calls;
    } names[STEP_NAMES];
};

/* The calls a thread's steps may be counted by, the first that has steps chosen: optimizer
 * steps; backward calls; batches with the loop's work between (where the thread made such
 * calls); every batch (where it made none: a loop whose work no span marks). */
enum source_kind { BY_OPTIMIZER, BY_BACKWARD, BY_BATCH_WORK, BY_BATCH, SOURCE_COUNT };

struct span_thread {
    uint32_t tid;
    /* its steps take GPU work and waits: the main thread, and a thread that steps an
     * optimizer, calls backward or gets batches (not one that only runs a model, as an
     * inference server's many threads do) */
    int parts;
    /* the earliest entry of a call that may start the first step, among those that returned */
    uint64_t starter_min;
    struct step_source source[SOURCE_COUNT];
    struct pi_held_call next; /* its latest outermost DataLoader next(), held as the others */
    /* for the steps by batches, where neither optimizer steps nor backward calls count them
     * (an evaluation or inference loop): the latest start and return of a call of the
     * loop's work (work_call), the latest such start that had come with the held next()
     * and whether that one raised (StopIteration ends an epoch) */
    uint64_t work_start_max, work_end_max, next_work_before;
    int next_raised;
    uint64_t work_open;  /* entry of the next() that began the open step by batches, 0: none */
    uint64_t batch_open; /* likewise, every batch a step */
    uint64_t next_end;   /* return of the latest next() placed */
};

struct pi_span_steps {
    struct span_thread *threads;
    size_t count, capacity;
    /* an optimizer step came, on any thread: the optimizer steps count the steps whatever
     * else comes, so the sources by batches were let go and take nothing more (every GPU
     * kernel, wait and synchronisation would go to them too) */
    int trained;
};

/* The sources that still take calls and parts: the first ones, in enum order. */
static int sources_fed(const struct pi_span_steps *s)
{
    return s->trained ? BY_BATCH_WORK : SOURCE_COUNT;
}

/* Calls that prepare a step, the earliest of which before the first one starts it. */
static int starts_a_step(unsigned kind, unsigned depth)
{
    return kind == PI_SPAN_MODULE || kind == PI_SPAN_BACKWARD || kind == PI_SPAN_DATALOADER_NEXT ||
           (kind == PI_SPAN_NAMED && depth == 0);
}

/* Calls of a loop's work, one of which between two batches makes them two steps' batches
 * (two DataLoaders zipped take two batches a step): those that prepare a step but the
 * batch itself, and the optimizer's step. */
static int work_call(unsigned kind, unsigned depth)
{
    return (starts_a_step(kind, depth) && kind != PI_SPAN_DATALOADER_NEXT) ||
           kind == PI_SPAN_OPTIMIZER_STEP;
}

static void source_init(struct step_source *s, int exact, unsigned warmup_steps)
{
    memset(s, 0, sizeof(*s));
    pi_histogram_init(&s->steps.steady_ns, exact);
    pi_histogram_init(&s->steps.warmup_ns, exact);
    pi_steps_time_micro_batches(&s->steps, exact, warmup_steps);
    s->first_start = UINT64_MAX;
}

static struct span_thread *thread_of(struct pi_process_info *p, uint32_t tid, int create,
                                     int exact, unsigned warmup_steps)
{
    struct pi_span_steps *s = p->span_steps;
    if (!s && (!create || !(s = p->span_steps = calloc(1, sizeof(*s)))))
        return NULL;
    for (size_t i = 0; i < s->count; i++)
        if (s->threads[i].tid == tid)
            return &s->threads[i];
    if (!create || s->count == SPAN_STEP_THREADS ||
        pi_array_room(&s->threads, &s->capacity, s->count, sizeof(*s->threads), 2) != 0)
        return NULL;
    struct span_thread *t = &s->threads[s->count++];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    t->starter_min = UINT64_MAX;
    for (int k = 0; k < SOURCE_COUNT; k++)
        source_init(&t->source[k], exact, warmup_steps);
    return t;
}

static void count_name(struct step_source *s, uint32_t id)
{
    for (int i = 0; i < STEP_NAMES; i++)
        if (s->names[i].calls == 0 || s->names[i].id == id) {
            s->names[i].id = id;
            s->names[i].calls++;
            return;
        }
}

/* An outermost call of @s's kind: its step ends at its return. */
static void record_step(struct step_source *s, const struct pi_held_call *c)
{
    uint64_t start = s->last_end      ? s->last_end
                     : s->first_start < c->start ? s->first_start
                                                 : c->start;
    if (c->end <= start)
        return; /* a damaged record: no step of its own */
    pi_steps_record(&s->steps, start, c->end, 0, 0);
    s->last_end = c->end;
    s->calls++;
    count_name(s, c->name);
}

static void backward_placed(struct span_thread *t, const struct pi_held_call *c)
{
    pi_steps_micro_batch(&t->source[BY_OPTIMIZER].steps, c->start, c->end);
    pi_steps_micro_batch(&t->source[BY_BACKWARD].steps, c->start, c->end);
    record_step(&t->source[BY_BACKWARD], c);
}

/* Batches taken this close together with none of the loop's work between are one step's
 * (zip() takes the second microseconds after the first); further apart, the first was
 * taken and left (a loop that broke, then another loop's first batch). */
#define SAME_STEP_GAP_NS 1000000ull

/* The step by batches open since @open ends at @end (when it is a step: @counts). */
static void end_batch_step(struct step_source *s, uint64_t *open, uint64_t end, int counts)
{
    if (*open && counts && end > *open) {
        pi_steps_record(&s->steps, *open, end, 0, 0);
        s->calls++;
    }
    *open = 0;
}

/*
 * A batch's step: from the entry of the next() that took it to the entry of the next one
 * that begins a step, or of the call that ended the epoch (@raised). By the loop's work:
 * a batch begins a step where the loop's work came since the batch before, or where it was
 * taken a while after (else it is one more batch of the same step), and a step in which
 * none of that work came is none (its batch was taken and left). Every batch: each begins
 * a step.
 */
static void batch_placed(struct span_thread *t, const struct pi_held_call *c,
                         uint64_t work_before, int raised)
{
    int worked = work_before > t->next_end;
    int apart = c->start > t->next_end && c->start - t->next_end >= SAME_STEP_GAP_NS;
    if (raised || worked || apart)
        end_batch_step(&t->source[BY_BATCH_WORK], &t->work_open, c->start, worked);
    end_batch_step(&t->source[BY_BATCH], &t->batch_open, c->start, 1);
    if (!raised) {
        if (!t->work_open)
            t->work_open = c->start;
        t->batch_open = c->start;
        count_name(&t->source[BY_BATCH_WORK], c->name);
        count_name(&t->source[BY_BATCH], c->name);
    }
    t->next_end = c->end;
}

/* The last steps by batches, open at the end: by the loop's work, it ends at the return of
 * the work done since its batch (without any, a loop that took one more batch and left, it
 * is none); every batch, it is none (where it ended is not known). */
static void batches_close(struct span_thread *t)
{
    end_batch_step(&t->source[BY_BATCH_WORK], &t->work_open, t->work_end_max,
                   t->work_start_max > t->next_end);
    t->batch_open = 0;
}

/* A batch: the time in next() is each source's wait for data, in the step it falls in. */
static void next_placed(const struct pi_span_steps *s, struct span_thread *t,
                        const struct pi_held_call *c, uint64_t work_before, int raised)
{
    for (int k = 0; k < sources_fed(s); k++)
        pi_steps_wait(&t->source[k].steps, c->start, c->end - c->start);
    if (!s->trained)
        batch_placed(t, c, work_before, raised);
}

/* The first optimizer step: the sources by batches can no longer give the steps. */
static void let_batches_go(struct pi_span_steps *s)
{
    s->trained = 1;
    for (size_t i = 0; i < s->count; i++)
        for (int k = BY_BATCH_WORK; k < SOURCE_COUNT; k++)
            pi_steps_free(&s->threads[i].source[k].steps);
}

/* The first call of @s's kind: the calls that returned before it may start its first step. */
static void start_source(struct step_source *s, uint64_t starter_min)
{
    if (!s->started) {
        s->started = 1;
        s->first_start = starter_min;
    }
}

void pi_span_steps_event(struct pi_process_info *p, const struct pi_event *ev, int exact,
                         unsigned warmup_steps)
{
    const struct pi_record *r = &ev->rec;
    unsigned kind = PI_SPAN_KIND(r->arg[0]), depth = PI_SPAN_DEPTH(r->arg[0]);
    int starter = starts_a_step(kind, depth);
    if ((!starter && kind != PI_SPAN_OPTIMIZER_STEP) || r->tid == 0)
        return;
    struct span_thread *t = thread_of(p, r->tid, 1, exact, warmup_steps);
    if (!t)
        return;
    t->parts |= r->tid == (uint32_t)p->header.pid || kind == PI_SPAN_OPTIMIZER_STEP ||
                kind == PI_SPAN_BACKWARD || kind == PI_SPAN_DATALOADER_NEXT;
    uint64_t end = ev->dur_ns <= UINT64_MAX - ev->ts_ns ? ev->ts_ns + ev->dur_ns : UINT64_MAX;
    struct pi_held_call c = {ev->ts_ns, end, PI_SPAN_NAME(r->arg[0]), 1}, placed;
    if (kind == PI_SPAN_OPTIMIZER_STEP) {
        struct step_source *optimizer = &t->source[BY_OPTIMIZER];
        if (!p->span_steps->trained)
            let_batches_go(p->span_steps);
        start_source(optimizer, t->starter_min);
        if (pi_held_call_take(&optimizer->held, &c, &placed))
            record_step(optimizer, &placed);
    } else if (kind == PI_SPAN_BACKWARD) {
        start_source(&t->source[BY_BACKWARD], t->starter_min);
        if (pi_held_call_take(&t->source[BY_BACKWARD].held, &c, &placed))
            backward_placed(t, &placed);
    } else if (kind == PI_SPAN_DATALOADER_NEXT) {
        if (pi_held_call_take(&t->next, &c, &placed))
            next_placed(p->span_steps, t, &placed, t->next_work_before, t->next_raised);
        t->next_work_before = t->work_start_max; /* the held call is now this one */
        t->next_raised = (r->arg[0] & PI_SPAN_RAISED) != 0;
    }
    if (work_call(kind, depth)) {
        t->work_start_max = c.start > t->work_start_max ? c.start : t->work_start_max;
        t->work_end_max = c.end > t->work_end_max ? c.end : t->work_end_max;
    }
    if (starter && c.start < t->starter_min)
        t->starter_min = c.start;
}

void pi_span_steps_gpu(struct pi_process_info *p, uint64_t ts, uint64_t dur, int collective)
{
    struct pi_span_steps *s = p->span_steps;
    for (size_t i = 0; s && i < s->count; i++) {
        struct span_thread *t = &s->threads[i];
        if (!t->parts)
            continue;
        for (int k = 0; k < sources_fed(s); k++) {
            pi_steps_gpu(&t->source[k].steps, ts, dur);
            if (collective) /* NCCL's kernels wait on the GPU for the other ranks */
                pi_steps_collective_gpu(&t->source[k].steps, ts, dur);
        }
    }
}

void pi_span_steps_wait(struct pi_process_info *p, uint32_t tid, uint64_t ts, uint64_t dur,
                        unsigned time_class)
{
    struct span_thread *t = p->span_steps ? thread_of(p, tid, 0, 0, 0) : NULL;
    if (!t || !t->parts)
        return;
    for (int k = 0; k < sources_fed(p->span_steps); k++) {
        if (time_class == PI_TIME_SYNC)
            pi_steps_sync(&t->source[k].steps, ts, dur);
        else if (time_class == PI_TIME_LOCK_WAIT)
            pi_steps_lock(&t->source[k].steps, ts, dur);
    }
}

/* The calls still held were outermost: place them, the waits and backward calls before the
 * optimizer step whose step they may fall in. */
static void place_held(const struct pi_span_steps *s, struct span_thread *t)
{
    struct step_source *optimizer = &t->source[BY_OPTIMIZER], *backward = &t->source[BY_BACKWARD];
    if (t->next.held)
        next_placed(s, t, &t->next, t->next_work_before, t->next_raised);
    if (!s->trained)
        batches_close(t);
    if (backward->held.held)
        backward_placed(t, &backward->held);
    if (optimizer->held.held)
        record_step(optimizer, &optimizer->held);
    t->next.held = backward->held.held = optimizer->held.held = 0;
}

/* The thread whose steps of @kind are the most, at least @least; the main thread (@main) on
 * a tie. NULL when none has. */
static struct span_thread *busiest(struct pi_span_steps *s, enum source_kind kind,
                                   uint64_t least, uint32_t main)
{
    struct span_thread *best = NULL;
    for (size_t i = 0; i < s->count; i++) {
        struct span_thread *t = &s->threads[i];
        uint64_t calls = t->source[kind].calls;
        uint64_t most = best ? best->source[kind].calls : 0;
        if (calls >= least && (!best || calls > most || (calls == most && t->tid == main)))
            best = t;
    }
    return best;
}

/* The name of most of @s's steps' calls, NULL when not known. */
static char *most_named(const struct step_source *s, const struct pi_reader *reader)
{
    const struct step_name *most = &s->names[0];
    for (int i = 1; i < STEP_NAMES; i++)
        if (s->names[i].calls > most->calls)
            most = &s->names[i];
    const char *name = most->calls ? pi_reader_string(reader, most->id) : NULL;
    return name ? strdup(name) : NULL;
}

/* The backward calls of @steps: in all, and in the median step (as the percentiles of the
 * reports are taken, between order statistics). */
static void count_micro_batches(struct pi_steps *steps)
{
    uint64_t *each = malloc((steps->count + 1) * sizeof(*each)), total = 0;
    struct pi_step_figures f;
    for (uint64_t i = 0; each && pi_steps_figures(steps, i, &f); i++) {
        each[i] = f.micro_batches;
        total += f.micro_batches;
    }
    steps->micro_batches = total;
    if (each && steps->count) {
        pi_sort_u64(each, steps->count);
        double position = 0.5 * (double)(steps->count - 1);
        uint64_t below = (uint64_t)position;
        uint64_t above = below + 1 < steps->count ? below + 1 : below;
        double low = (double)each[below], high = (double)each[above];
        steps->micro_batches_p50 = low + (high - low) * (position - (double)below);
    }
    free(each);
}

int pi_span_steps_finish(struct pi_process_info *p, const struct pi_reader *reader,
                         unsigned warmup_steps)
{
    struct pi_span_steps *s = p->span_steps;
    if (!s)
        return 0;
    for (size_t i = 0; i < s->count; i++)
        place_held(s, &s->threads[i]);
    uint32_t main = (uint32_t)p->header.pid;
    /* by batches only where no user's NVTX ranges count them: those are the user's word */
    int by_batches = !p->steps_from || strcmp(p->steps_from, "NVTX") != 0;
    enum source_kind kind = BY_OPTIMIZER;
    struct span_thread *t = busiest(s, BY_OPTIMIZER, 1, main);
    if (!t && (t = busiest(s, BY_BACKWARD, 2, main)))
        kind = BY_BACKWARD;
    if (!t && by_batches && (t = busiest(s, BY_BATCH_WORK, 2, main)))
        kind = BY_BATCH_WORK;
    if (!t && by_batches && (t = busiest(s, BY_BATCH, 2, main)))
        kind = BY_BATCH;
    if (t && kind == BY_BATCH && t->work_start_max)
        t = NULL; /* every batch a step only where no span marks the loop's work */
    if (!t) {
        pi_span_steps_free(p);
        return 0;
    }
    struct step_source *source = &t->source[kind];
    const char *from = kind == BY_OPTIMIZER     ? "optimizer step"
                       : kind == BY_BACKWARD    ? "backward"
                       : kind == BY_BATCH_WORK  ? PI_STEPS_FROM_BATCHES
                                                : PI_STEPS_FROM_EVERY_BATCH;
    const struct pi_evaluation_loops *e = p->evaluation_loops;
    for (size_t i = 0; e && i < e->count; i++)
        pi_steps_mark_evaluation(&source->steps, e->loops[i].start_ns, e->loops[i].end_ns);
    pi_steps_finish(&source->steps, warmup_steps);
    if (kind == BY_OPTIMIZER || kind == BY_BACKWARD)
        count_micro_batches(&source->steps);
    struct pi_steps replaced = p->steps;
    p->steps = source->steps;
    memset(&source->steps, 0, sizeof(source->steps));
    pi_steps_free(&replaced);
    p->steps_from = from;
    p->steps_tid = t->tid;
    if (p->spans) {
        free(p->spans->steps_name);
        p->spans->steps_name = most_named(source, reader);
    }
    pi_span_steps_free(p);
    return 1;
}

int pi_steps_by_batches(const struct pi_process_info *p)
{
    return p->steps_from && strcmp(p->steps_from, PI_STEPS_FROM_BATCHES) == 0;
}

void pi_span_steps_free(struct pi_process_info *p)
{
    struct pi_span_steps *s = p->span_steps;
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++) {
        for (int k = 0; k < SOURCE_COUNT; k++)
            pi_steps_free(&s->threads[i].source[k].steps);
    }
    free(s->threads);
    free(s);
    p->span_steps = NULL;
}
