/* evaluation_loops.c - see evaluation_loops.h. */
#include "evaluation_loops.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/common/array_room.h"

/* A thread's run of module calls made with autograd off, since its last training call. */
struct run {
    uint32_t tid, name; /* name: its module's (a loop calls one model) */
    uint64_t start_ns, end_ns, forwards;
};

struct pi_evaluation_threads {
    struct run *runs;
    size_t count, capacity;
};

static struct pi_evaluation_loops *loops_of(struct pi_process_info *p)
{
    if (!p->evaluation_loops)
        p->evaluation_loops = calloc(1, sizeof(*p->evaluation_loops));
    struct pi_evaluation_loops *e = p->evaluation_loops;
    if (e && !e->threads)
        e->threads = calloc(1, sizeof(*e->threads));
    return e && e->threads ? e : NULL;
}

static struct run *run_of(struct pi_evaluation_threads *t, uint32_t tid)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->runs[i].tid == tid)
            return &t->runs[i];
    if (pi_array_room(&t->runs, &t->capacity, t->count, sizeof(*t->runs), 8) != 0)
        return NULL;
    struct run *r = &t->runs[t->count++];
    memset(r, 0, sizeof(*r));
    r->tid = tid;
    return r;
}

/* @r ends: two calls or more make a loop. */
static void end_run(struct pi_evaluation_loops *e, struct run *r)
{
    if (r->forwards >= 2) {
        e->total_ns += r->end_ns - r->start_ns;
        if (e->count == PI_EVALUATION_LOOPS_MAX ||
            (!e->loops && !(e->loops = calloc(PI_EVALUATION_LOOPS_MAX, sizeof(*e->loops)))))
            e->unkept++;
        else
            e->loops[e->count++] = (struct pi_evaluation_loop){r->start_ns, r->end_ns, r->forwards};
    }
    r->forwards = 0;
}

void pi_evaluation_loops_span(struct pi_process_info *p, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    unsigned kind = PI_SPAN_KIND(r->arg[0]);
    if (kind != PI_SPAN_MODULE && kind != PI_SPAN_BACKWARD && kind != PI_SPAN_OPTIMIZER_STEP)
        return;
    struct pi_evaluation_loops *e = loops_of(p);
    struct run *run = e ? run_of(e->threads, r->tid) : NULL;
    if (!run)
        return;
    if (kind != PI_SPAN_MODULE || !(r->arg[0] & PI_SPAN_NO_GRAD)) { /* training: the run ends */
        e->trained |= kind != PI_SPAN_MODULE;
        end_run(e, run);
        return;
    }
    uint64_t end = ev->ts_ns + ev->dur_ns;
    if (run->forwards && run->name != PI_SPAN_NAME(r->arg[0]))
        end_run(e, run); /* another model: a teacher's forward after the loop */
    if (!run->forwards) {
        run->start_ns = ev->ts_ns;
        run->name = PI_SPAN_NAME(r->arg[0]);
    }
    run->end_ns = end;
    run->forwards++;
}

void pi_evaluation_loops_finish_file(struct pi_process_info *p)
{
    struct pi_evaluation_loops *e = p->evaluation_loops;
    if (!e || !e->threads)
        return;
    for (size_t i = 0; i < e->threads->count; i++)
        end_run(e, &e->threads->runs[i]);
    free(e->threads->runs);
    free(e->threads);
    e->threads = NULL;
    if (!e->trained) /* a process that serves or infers: no evaluation inside training */
        pi_evaluation_loops_free(p);
}

void pi_evaluation_loops_free(struct pi_process_info *p)
{
    struct pi_evaluation_loops *e = p->evaluation_loops;
    if (!e)
        return;
    if (e->threads)
        free(e->threads->runs);
    free(e->threads);
    free(e->loops);
    free(e);
    p->evaluation_loops = NULL;
}
