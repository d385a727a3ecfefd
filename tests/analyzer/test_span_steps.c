/*
 * Unit: training steps from the framework's own calls (PI_REC_SPAN),
 * against loops whose every call the test made. With an optimizer, one
 * step per optimizer step: as many steps as optimizer steps, each ending
 * at its return and starting at the previous one's, however many backward
 * calls (micro-batches) each holds; a wrapping optimizer's step counts
 * once. Where a step has two micro-batches or more, each lasts from the
 * step's start or the previous backward call's return to its own backward
 * call's return, and the rest of the step follows the last one: over the
 * steady steps, or every step where all are warm-up. Without an optimizer,
 * one step per backward call. Each step's time in the DataLoader's next(),
 * synchronisations and GPU work are those that began inside it. These steps win over the read-backs that would otherwise
 * count every micro-batch. The first step starts at the earliest call that
 * prepared it, not at a call around the whole loop; the loop is the thread
 * with the most optimizer steps.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/host/spans.h"
#include "analysis/host/steps.h"
#include "span_trace.h"

/* What the loop does. */
struct loop {
    unsigned steps, micro;   /* optimizer steps (or backward calls), backward calls a step */
    const unsigned *micro_each; /* backward calls of each step, NULL: micro each */
    int optimizer;           /* 0: a manual update, no optimizer */
    int wrapped;             /* the optimizer's step calls a wrapped optimizer's */
    int spans;               /* 0: the same loop recorded without spans */
    int read_backs;          /* loss.item() after each backward */
    unsigned depth;          /* the spans open around the loop's calls */
    uint32_t tid;
};

/* What the test knows of each step, then of the calls that fall in steps. */
struct truth {
    uint64_t start, end, wait, sync, gpu, micro;
    uint64_t micro_end; /* where its last backward call returned */
};

static struct truth truth[64];
static unsigned truth_count;
/* the waits and work of the loop, each at its start, to be placed in steps once known */
static struct part {
    uint64_t start, dur;
    enum { NEXT, SYNC, GPU, BACKWARD } what;
} parts[4096];
static unsigned part_count;

static uint64_t next_random(void)
{
    static uint64_t x = 88172645463325252ull;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
}

static void call(uint32_t tid, uint32_t name, unsigned kind, unsigned depth, uint64_t start,
                 uint64_t end)
{
    struct span_call c = {tid, start, end, name, kind, depth, 0, (end - start) / 2, 0};
    span_trace_call(&c);
}

static void part(uint64_t start, uint64_t dur, int what)
{
    cr_assert_lt(part_count, 4096);
    parts[part_count++] = (struct part){start, dur, what};
}

/* One micro-batch from @t: next(), forward, backward, a read-back, a synchronisation. */
static uint64_t micro_batch(const struct loop *l, const uint32_t *id, uint64_t t)
{
    uint64_t next = 200 * US + next_random() % (3 * MS);
    if (l->spans)
        call(l->tid, id[0], PI_SPAN_DATALOADER_NEXT, l->depth, t, t + next);
    part(t, next, NEXT);
    t += next + 10 * US;
    uint64_t forward = 1 * MS + next_random() % (4 * MS), gpu = 300 * US + next_random() % 500;
    if (l->spans)
        call(l->tid, id[1], PI_SPAN_MODULE, l->depth, t, t + forward);
    span_trace_gpu(t + forward / 2, gpu, t + forward + 2 * MS); /* its duration comes late */
    part(t + forward / 2, gpu, GPU);
    t += forward + 5 * US;
    uint64_t backward = 2 * MS + next_random() % (5 * MS);
    if (l->spans) { /* Tensor.backward calls torch.autograd.backward */
        call(l->tid, id[3], PI_SPAN_BACKWARD, l->depth + 1, t + 1 * US, t + backward - 1 * US);
        call(l->tid, id[2], PI_SPAN_BACKWARD, l->depth, t, t + backward);
    }
    part(t, backward, BACKWARD);
    t += backward + 5 * US;
    if (l->read_backs) {
        uint64_t copy = 50 * US + next_random() % (200 * US);
        struct pi_record r = {PI_REC_GPU_COPY,
                              PI_CUDA_FLAGS(PI_CUDA_API_cudaMemcpy, PI_GPU_COPY_DTOH, 0),
                              l->tid, t, copy, {4, 7, PI_CUDA_WHERE(0, 0, 0)}};
        span_trace_record(&r, t + copy);
        part(t, copy, SYNC); /* the host blocks until the copy is done */
        t += copy + 5 * US;
    }
    uint64_t sync = 100 * US + next_random() % MS;
    span_trace_sync(l->tid, t, sync);
    part(t, sync, SYNC);
    return t + sync + 5 * US;
}

/* The loop's file; truth[] holds each step's bounds. @first: where its first step starts
 * when a call before it prepared it (0: at its first next()). */
static const char *training_loop(const struct loop *l, uint64_t t, uint64_t first)
{
    uint32_t id[7] = {span_trace_name("_MultiProcessingDataLoaderIter.__next__"),
                      span_trace_name("GPT2LMHeadModel"), span_trace_name("Tensor.backward"),
                      span_trace_name("torch.autograd.backward"), span_trace_name("AdamW.step"),
                      span_trace_name("ZeroRedundancyOptimizer.step"),
                      span_trace_name("from_pretrained")};
    if (l->spans) /* loading the model prepares no step */
        call(l->tid, id[6], PI_SPAN_FROM_PRETRAINED, l->depth, t - 80 * MS, t - 30 * MS);
    truth_count = part_count = 0;
    for (unsigned k = 0; k < l->steps; k++) {
        truth[k].start = k ? truth[k - 1].end : first ? first : t;
        for (unsigned m = 0; m < (l->micro_each ? l->micro_each[k] : l->micro); m++)
            t = micro_batch(l, id, t);
        if (l->optimizer) {
            uint64_t step = 1 * MS + next_random() % (3 * MS);
            if (l->spans && l->wrapped) {
                call(l->tid, id[4], PI_SPAN_OPTIMIZER_STEP, l->depth + 1, t + 1 * US,
                     t + step - 1 * US);
                call(l->tid, id[5], PI_SPAN_OPTIMIZER_STEP, l->depth, t, t + step);
            } else if (l->spans) {
                call(l->tid, id[4], PI_SPAN_OPTIMIZER_STEP, l->depth, t, t + step);
            }
            t += step;
            truth[k].end = t;
            t += 20 * US; /* zero_grad: the next step's */
        } else {
            truth[k].end = parts[part_count - 1 - (l->read_backs ? 2 : 1)].start +
                           parts[part_count - 1 - (l->read_backs ? 2 : 1)].dur;
        }
        truth_count++;
    }
    /* an evaluation after the loop: in no step */
    if (l->spans) {
        call(l->tid, id[0], PI_SPAN_DATALOADER_NEXT, l->depth, t + 1 * MS, t + 2 * MS);
        call(l->tid, id[1], PI_SPAN_MODULE, l->depth, t + 3 * MS, t + 9 * MS);
    }
    span_trace_sync(l->tid, t + 10 * MS, 400 * US);
    return span_trace_write();
}

/* Each step's waits, work and backward calls: the parts that began inside it. */
static void place_parts(void)
{
    for (unsigned k = 0; k < truth_count; k++) {
        struct truth *s = &truth[k];
        s->wait = s->sync = s->gpu = s->micro = s->micro_end = 0;
        for (unsigned i = 0; i < part_count; i++) {
            const struct part *p = &parts[i];
            if (p->start < s->start || p->start >= s->end)
                continue;
            s->wait += p->what == NEXT ? p->dur : 0;
            s->sync += p->what == SYNC ? p->dur : 0;
            s->gpu += p->what == GPU ? p->dur : 0;
            s->micro += p->what == BACKWARD;
            s->micro_end = p->what == BACKWARD ? p->start + p->dur : s->micro_end;
        }
    }
}

static void assert_steps_are_the_truth(const struct pi_steps *steps)
{
    place_parts();
    cr_assert_eq(steps->count, truth_count, "%llu steps, %u made",
                 (unsigned long long)steps->count, truth_count);
    for (unsigned k = 0; k < truth_count; k++) {
        struct pi_step_figures f;
        cr_assert(pi_steps_figures(steps, k, &f), "step %u", k);
        cr_assert_eq(f.start, truth[k].start, "step %u starts at %llu, not %llu", k,
                     (unsigned long long)f.start, (unsigned long long)truth[k].start);
        cr_assert_eq(f.end, truth[k].end, "step %u ends at %llu, not %llu", k,
                     (unsigned long long)f.end, (unsigned long long)truth[k].end);
        cr_assert_eq(f.wait, truth[k].wait, "step %u waited %llu ns in next(), not %llu", k,
                     (unsigned long long)f.wait, (unsigned long long)truth[k].wait);
        cr_assert_eq(f.sync, truth[k].sync, "step %u synchronised %llu ns, not %llu", k,
                     (unsigned long long)f.sync, (unsigned long long)truth[k].sync);
        cr_assert_eq(f.gpu, truth[k].gpu, "step %u: GPU work %llu ns, not %llu", k,
                     (unsigned long long)f.gpu, (unsigned long long)truth[k].gpu);
        cr_assert_eq(f.micro_batches, truth[k].micro, "step %u: %llu backward calls, not %llu",
                     k, (unsigned long long)f.micro_batches, (unsigned long long)truth[k].micro);
        cr_assert_eq(f.micro_batches_end, truth[k].micro_end,
                     "step %u: its last backward call returned at %llu, not %llu", k,
                     (unsigned long long)f.micro_batches_end,
                     (unsigned long long)truth[k].micro_end);
    }
}

/* What the test knows of the steps from @first on that have two backward calls or more:
 * each micro-batch's time and each step's after its last micro-batch, sorted, and the
 * micro-batches' share of those steps' time. */
static struct split {
    uint64_t each[1024], after[64];
    unsigned each_count, after_count;
    double share;
} split;

static void split_from(unsigned first)
{
    uint64_t in_micro_batches = 0, in_steps = 0;
    split.each_count = split.after_count = 0;
    place_parts();
    for (unsigned k = first; k < truth_count; k++) {
        const struct truth *s = &truth[k];
        if (s->micro < 2)
            continue;
        uint64_t from = s->start; /* a micro-batch starts where the one before returned */
        for (unsigned i = 0; i < part_count; i++) {
            const struct part *p = &parts[i];
            if (p->what != BACKWARD || p->start < s->start || p->start >= s->end)
                continue;
            cr_assert_lt(split.each_count, 1024);
            split.each[split.each_count++] = p->start + p->dur - from;
            from = p->start + p->dur;
        }
        split.after[split.after_count++] = s->end - from;
        in_micro_batches += from - s->start;
        in_steps += s->end - s->start;
    }
    pi_sort_u64(split.each, split.each_count);
    pi_sort_u64(split.after, split.after_count);
    split.share = in_steps ? (double)in_micro_batches / (double)in_steps : 0;
}

/* @got within what the histogram may be off from @want: nothing in exact mode */
static void assert_near(double got, double want, int exact, const char *what, double q)
{
    double tolerance = exact ? 1e-9 * want + 1e-6 : PI_HISTOGRAM_RELATIVE_ERROR * want + 1;
    double off = got > want ? got - want : want - got;
    cr_assert_leq(off, tolerance, "%s p%g: %.0f ns, not %.0f", what, 100 * q, got, want);
}

static void assert_split_is_the_truth(struct pi_steps *steps, int exact)
{
    static const double each_q[] = {0.5, 0.9, 0.99}, after_q[] = {0.5, 0.99};
    struct pi_histogram *each = &steps->micro_batch_ns, *after = &steps->after_micro_batches_ns;
    cr_assert_eq(each->count, split.each_count, "%llu micro-batches timed, not %u",
                 (unsigned long long)each->count, split.each_count);
    cr_assert_eq(after->count, split.after_count, "%llu steps split, not %u",
                 (unsigned long long)after->count, split.after_count);
    for (unsigned i = 0; i < sizeof(each_q) / sizeof(*each_q); i++)
        assert_near(pi_histogram_quantile(each, each_q[i]),
                    span_quantile(split.each, split.each_count, each_q[i]), exact,
                    "a micro-batch", each_q[i]);
    cr_assert_eq(each->max, split.each[split.each_count - 1]);
    for (unsigned i = 0; i < sizeof(after_q) / sizeof(*after_q); i++)
        assert_near(pi_histogram_quantile(after, after_q[i]),
                    span_quantile(split.after, split.after_count, after_q[i]), exact,
                    "after the last micro-batch", after_q[i]);
    cr_assert_float_eq(pi_steps_micro_batch_share(steps), split.share, 1e-12,
                       "the micro-batches' share %.6f, not %.6f",
                       pi_steps_micro_batch_share(steps), split.share);
}

Test(span_steps, optimizer_steps_with_gradient_accumulation_are_the_steps)
{
    span_trace_begin();
    struct loop l = {.steps = 12, .micro = 3, .optimizer = 1, .spans = 1, .read_backs = 1,
                     .tid = (uint32_t)getpid()};
    struct pi_analysis a = span_trace_analyse(training_loop(&l, 1000 * MS, 0), 0, NULL);
    const struct pi_process_info *p = &a.processes[0];
    cr_assert_str_eq(p->steps_from, "optimizer step");
    cr_assert_eq(p->steps_tid, l.tid);
    cr_assert_str_eq(p->spans->steps_name, "AdamW.step");
    assert_steps_are_the_truth(&p->steps);
    cr_assert_eq(p->steps.micro_batches, 12 * 3);
    cr_assert_float_eq(p->steps.micro_batches_p50, 3.0, 1e-9);
    cr_assert_eq(p->steps.warmup, 1, "a tenth of 12 steps, at least one");
    split_from(1);
    assert_split_is_the_truth(&a.processes[0].steps, 0);
    pi_analysis_free(&a);
}

Test(span_steps, each_micro_batch_lasts_to_its_backward_return)
{
    /* 40 steps of one to four micro-batches (a step of one is not split); the automatic
     * warm-up is a tenth of them */
    static const unsigned micro[40] = {3, 2, 4, 1, 3, 3, 2, 4, 4, 3, 1, 2, 3, 3, 4, 2, 3, 3, 1, 3,
                                       2, 4, 3, 3, 3, 2, 1, 4, 3, 3, 2, 3, 4, 3, 3, 2, 3, 1, 3, 4};
    for (int exact = 0; exact <= 1; exact++) {
        span_trace_begin();
        struct loop l = {.steps = 40, .micro_each = micro, .optimizer = 1, .spans = 1,
                         .read_backs = 1, .tid = (uint32_t)getpid()};
        struct pi_analysis a = span_trace_analyse(training_loop(&l, 1000 * MS, 0), exact, NULL);
        assert_steps_are_the_truth(&a.processes[0].steps);
        cr_assert_eq(a.processes[0].steps.warmup, 4);
        split_from(4);
        assert_split_is_the_truth(&a.processes[0].steps, exact);
        pi_analysis_free(&a);
    }
}

Test(span_steps, a_run_all_warm_up_is_split_whole)
{
    /* 3 warm-up steps of 12 asked for: the other 9 are split; all 12: every one is */
    static const unsigned warmups[] = {3, 12};
    for (unsigned w = 0; w < 2; w++)
        for (int exact = 0; exact <= 1; exact++) {
            span_trace_begin();
            struct loop l = {.steps = 12, .micro = 3, .optimizer = 1, .spans = 1,
                             .tid = (uint32_t)getpid()};
            struct pi_analysis_options options = {.exact = exact, .warmup_steps = warmups[w]};
            struct pi_analysis a =
                span_trace_analyse_with(training_loop(&l, 1000 * MS, 0), &options);
            cr_assert_eq(a.processes[0].steps.warmup, warmups[w]);
            split_from(warmups[w] < l.steps ? warmups[w] : 0);
            assert_split_is_the_truth(&a.processes[0].steps, exact);
            pi_analysis_free(&a);
        }
}

Test(span_steps, they_win_over_the_read_backs_that_count_every_micro_batch)
{
    /* the same loop without spans: its loss read-backs, one a micro-batch, count the steps */
    span_trace_begin();
    struct loop l = {.steps = 12, .micro = 3, .optimizer = 1, .spans = 0, .read_backs = 1,
                     .tid = (uint32_t)getpid()};
    struct pi_analysis a = span_trace_analyse(training_loop(&l, 1000 * MS, 0), 0, NULL);
    cr_assert_str_eq(a.processes[0].steps_from, "CUDA read-back");
    cr_assert_eq(a.processes[0].steps.count, 12 * 3);
    pi_analysis_free(&a);
    span_trace_begin();
    l.spans = 1;
    a = span_trace_analyse(training_loop(&l, 1000 * MS, 0), 0, NULL);
    cr_assert_str_eq(a.processes[0].steps_from, "optimizer step");
    cr_assert_eq(a.processes[0].steps.count, 12);
    pi_analysis_free(&a);
}

Test(span_steps, a_wrapping_optimizer_counts_once)
{
    span_trace_begin();
    struct loop l = {.steps = 9, .micro = 2, .optimizer = 1, .wrapped = 1, .spans = 1,
                     .tid = (uint32_t)getpid()};
    struct pi_analysis a = span_trace_analyse(training_loop(&l, 1000 * MS, 0), 0, NULL);
    const struct pi_process_info *p = &a.processes[0];
    cr_assert_str_eq(p->steps_from, "optimizer step");
    cr_assert_str_eq(p->spans->steps_name, "ZeroRedundancyOptimizer.step");
    assert_steps_are_the_truth(&p->steps);
    cr_assert_float_eq(p->steps.micro_batches_p50, 2.0, 1e-9);
    split_from(1); /* a tenth of 9 steps, at least one */
    assert_split_is_the_truth(&a.processes[0].steps, 0);
    pi_analysis_free(&a);
}

Test(span_steps, backward_calls_are_the_steps_without_an_optimizer)
{
    /* a manual SGD update; the user's own load_data() before the first forward prepares
     * step 1 */
    span_trace_begin();
    uint32_t tid = (uint32_t)getpid(), load = span_trace_name("mymod:load_data");
    uint64_t t = 1000 * MS;
    call(tid, load, PI_SPAN_NAMED, 0, t - 5 * MS, t - 2 * MS);
    struct loop l = {.steps = 10, .micro = 1, .optimizer = 0, .spans = 1, .tid = tid};
    struct pi_analysis a = span_trace_analyse(training_loop(&l, t, t - 5 * MS), 0, NULL);
    const struct pi_process_info *p = &a.processes[0];
    cr_assert_str_eq(p->steps_from, "backward");
    cr_assert_str_eq(p->spans->steps_name, "Tensor.backward");
    assert_steps_are_the_truth(&p->steps);
    for (unsigned k = 1; k < truth_count; k++) {
        struct pi_step_figures f;
        cr_assert(pi_steps_figures(&p->steps, k, &f));
        cr_assert_eq(f.end - f.start, truth[k].end - truth[k - 1].end,
                     "step %u: the time between two backward returns", k);
    }
    pi_analysis_free(&a);
}

Test(span_steps, a_call_around_the_whole_loop_starts_no_step)
{
    /* main() holds the loop, and load_data() inside it is no call of the loop's own: step 1
     * starts at the first next() */
    span_trace_begin();
    uint32_t tid = (uint32_t)getpid(), main = span_trace_name("mymod:main"),
             load = span_trace_name("mymod:load_data");
    uint64_t t = 1000 * MS;
    call(tid, load, PI_SPAN_NAMED, 1, t - 5 * MS, t - 2 * MS);
    call(tid, main, PI_SPAN_NAMED, 0, t - 100 * MS, t + 10 * 1000 * MS); /* returns last */
    struct loop l = {.steps = 5, .micro = 2, .optimizer = 1, .spans = 1, .depth = 1, .tid = tid};
    struct pi_analysis a = span_trace_analyse(training_loop(&l, t, 0), 0, NULL);
    const struct pi_process_info *p = &a.processes[0];
    cr_assert_str_eq(p->steps_from, "optimizer step");
    assert_steps_are_the_truth(&p->steps);
    pi_analysis_free(&a);
}

Test(span_steps, one_backward_call_is_no_loop)
{
    span_trace_begin();
    uint32_t tid = (uint32_t)getpid(), backward = span_trace_name("Tensor.backward");
    call(tid, backward, PI_SPAN_BACKWARD, 0, 1000 * MS, 1010 * MS);
    struct pi_analysis a = span_trace_analyse(span_trace_write(), 0, NULL);
    cr_assert_eq(a.processes[0].steps.count, 0);
    cr_assert_null(a.processes[0].steps_from);
    cr_assert_eq(a.processes[0].spans->count, 1, "the call is in the table all the same");
    pi_analysis_free(&a);
}

Test(span_steps, the_thread_with_the_most_optimizer_steps_is_the_loop)
{
    /* the main thread steps an optimizer once (a warm-up of its own); a thread it started
     * runs the loop */
    span_trace_begin();
    uint32_t main = (uint32_t)getpid(), sgd = span_trace_name("SGD.step");
    call(main, sgd, PI_SPAN_OPTIMIZER_STEP, 0, 900 * MS, 901 * MS);
    struct loop l = {.steps = 6, .micro = 1, .optimizer = 1, .spans = 1, .tid = main + 1};
    struct pi_analysis a = span_trace_analyse(training_loop(&l, 1000 * MS, 0), 0, NULL);
    const struct pi_process_info *p = &a.processes[0];
    cr_assert_str_eq(p->steps_from, "optimizer step");
    cr_assert_eq(p->steps_tid, main + 1);
    cr_assert_str_eq(p->spans->steps_name, "AdamW.step");
    assert_steps_are_the_truth(&p->steps);
    /* a micro-batch a step: no split */
    cr_assert_eq(p->steps.micro_batch_ns.count, 0);
    cr_assert_eq(p->steps.after_micro_batches_ns.count, 0);
    cr_assert_float_eq(pi_steps_micro_batch_share(&p->steps), 0.0, 1e-12);
    pi_analysis_free(&a);
}

/*
 * An evaluation or inference loop: no optimizer, no backward. Each batch taken by next()
 * is a step, from that call's entry to the entry of the next batch's call, or of the one
 * that ended the epoch by StopIteration; two DataLoaders zipped take two batches a step;
 * a batch taken and never used is no step (the one before ends at its entry all the same),
 * and a last step with no call after its batch's ends where its forward returned. The
 * model's calls are not requests.
 */
static uint64_t forward_end; /* where the latest forward returned */

/* One step of @nexts batches taken back to back, a forward and a synchronisation, from @t:
 * where it ends */
static uint64_t batch_step(uint32_t tid, const uint32_t *id, uint64_t t, unsigned nexts)
{
    struct truth *s = &truth[truth_count++];
    memset(s, 0, sizeof(*s));
    s->start = t;
    for (unsigned n = 0; n < nexts; n++) {
        uint64_t next = 100 * US + next_random() % (2 * MS);
        call(tid, id[n], PI_SPAN_DATALOADER_NEXT, 0, t, t + next);
        s->wait += next;
        t += next + 5 * US;
    }
    uint64_t forward = 1 * MS + next_random() % (3 * MS), gpu = 200 * US;
    call(tid, id[2], PI_SPAN_MODULE, 0, t, t + forward);
    span_trace_gpu(t + forward / 2, gpu, t + forward + 2 * MS);
    s->gpu = gpu;
    t += forward + 5 * US;
    forward_end = t - 5 * US;
    uint64_t sync = 100 * US + next_random() % MS;
    span_trace_sync(tid, t, sync);
    return t + sync + 5 * US;
}

/* The steps from @first on end where the next one starts; the last at @end. */
static void end_steps(unsigned first, uint64_t end)
{
    for (unsigned k = first; k + 1 < truth_count; k++)
        truth[k].end = truth[k + 1].start;
    truth[truth_count - 1].end = end;
}

Test(span_steps, batches_are_the_steps_of_a_loop_without_an_optimizer)
{
    span_trace_begin();
    uint32_t tid = (uint32_t)getpid();
    uint32_t id[3] = {span_trace_name("DataLoader.__next__"),
                      span_trace_name("DataLoader.__next__"), span_trace_name("ResNet")};
    uint64_t t = 1000 * MS;
    truth_count = 0;
    for (unsigned epoch = 0; epoch < 3; epoch++) {
        unsigned first = truth_count;
        for (unsigned k = 0; k < 8; k++)
            t = batch_step(tid, id, t, epoch == 2 ? 2 : 1); /* the third epoch zipped */
        end_steps(first, t);
        /* next() raising StopIteration: the epoch's last step ends at its entry */
        struct span_call stop = {tid, t, t + 300 * US, id[0], PI_SPAN_DATALOADER_NEXT, 0, 1, 0, 0};
        span_trace_call(&stop);
        t += 50 * MS; /* between epochs: evaluation, checkpoints; no step */
    }
    /* a loop that takes a batch more than it uses and leaves: that one is no step */
    unsigned first = truth_count;
    for (unsigned k = 0; k < 4; k++)
        t = batch_step(tid, id, t, 1);
    end_steps(first, t);
    call(tid, id[0], PI_SPAN_DATALOADER_NEXT, 0, t, t + 400 * US);
    t += 20 * MS;
    /* a last loop and nothing after its last batch's work */
    first = truth_count;
    for (unsigned k = 0; k < 3; k++)
        t = batch_step(tid, id, t, 1);
    end_steps(first, forward_end);
    struct pi_analysis a = span_trace_analyse(span_trace_write(), 0, NULL);
    const struct pi_process_info *p = &a.processes[0];
    cr_assert_str_eq(p->steps_from, "DataLoader next()");
    cr_assert_null(p->requests, "a batch loop serves no requests");
    cr_assert_eq(p->steps.count, truth_count, "%llu steps, %u batches used",
                 (unsigned long long)p->steps.count, truth_count);
    for (unsigned k = 0; k < truth_count; k++) {
        struct pi_step_figures f;
        uint64_t end = truth[k].end;
        cr_assert(pi_steps_figures(&p->steps, k, &f), "step %u", k);
        cr_assert_eq(f.start, truth[k].start, "step %u starts at %llu, not %llu", k,
                     (unsigned long long)f.start, (unsigned long long)truth[k].start);
        cr_assert_eq(f.end, end, "step %u ends at %llu, not %llu", k,
                     (unsigned long long)f.end, (unsigned long long)end);
        cr_assert_eq(f.wait, truth[k].wait, "step %u waited %llu ns in next(), not %llu", k,
                     (unsigned long long)f.wait, (unsigned long long)truth[k].wait);
        cr_assert_eq(f.gpu, truth[k].gpu, "step %u: GPU work %llu, not %llu", k,
                     (unsigned long long)f.gpu, (unsigned long long)truth[k].gpu);
    }
    pi_analysis_free(&a);
}

Test(span_steps, every_batch_is_a_step_where_no_span_marks_the_work)
{
    /* the loop computes in functions no span marks (numpy, torch's functions): each batch
     * begins a step, however close together; the epoch's StopIteration ends the last */
    span_trace_begin();
    uint32_t tid = (uint32_t)getpid(), next = span_trace_name("DataLoader.__next__");
    uint64_t t = 1000 * MS;
    truth_count = 0;
    for (unsigned k = 0; k < 6; k++) {
        struct truth *s = &truth[truth_count++];
        memset(s, 0, sizeof(*s));
        s->start = t;
        uint64_t wait = 50 * US + next_random() % MS;
        call(tid, next, PI_SPAN_DATALOADER_NEXT, 0, t, t + wait);
        s->wait = wait;
        t += wait + 20 * US + next_random() % (2 * MS); /* its work: no span */
    }
    end_steps(0, t);
    struct span_call stop = {tid, t, t + 100 * US, next, PI_SPAN_DATALOADER_NEXT, 0, 1, 0, 0};
    span_trace_call(&stop);
    struct pi_analysis a = span_trace_analyse(span_trace_write(), 0, NULL);
    const struct pi_process_info *p = &a.processes[0];
    cr_assert_str_eq(p->steps_from, "DataLoader next(), every batch");
    cr_assert_eq(p->steps.count, truth_count, "%llu steps, %u batches",
                 (unsigned long long)p->steps.count, truth_count);
    for (unsigned k = 0; k < truth_count; k++) {
        struct pi_step_figures f;
        cr_assert(pi_steps_figures(&p->steps, k, &f), "step %u", k);
        cr_assert_eq(f.start, truth[k].start, "step %u start", k);
        cr_assert_eq(f.end, truth[k].end, "step %u end", k);
        cr_assert_eq(f.wait, truth[k].wait, "step %u wait", k);
    }
    pi_analysis_free(&a);
}
