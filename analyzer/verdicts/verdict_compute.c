/*
 * verdict_compute.c - a loop held back by nothing but its own work: it
 * computes. PyTorch's intra-op threads (OpenMP or its own pool) compute
 * for the loop's thread, which meanwhile waits for them in calls no hook
 * sees: their CPU is the loop's, not time "blocked or waiting for a CPU".
 */
#include "verdict.h"
#include "profinject/verdict_thresholds.h"

#include "analysis/host/requests.h"
#include "analysis/host/threads.h"
#include "analysis/sites/native_names.h"
#include "analysis/sites/native_time.h"
#include "analysis/sites/python_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* half the loop on a CPU, its own or its pool's, and nothing else held it back */
#define TOP_FUNCTIONS 3

/*
 * An intra-op thread: one of the process's threads that spent no time in a
 * recorded call (an OpenMP or PyTorch pool thread computes and waits on its
 * pool in calls no hook sees) and whose CPU time the trace measured. Threads that
 * wait on queues, locks or files (Python threads, the pin-memory relay, the
 * autograd engine) make recorded calls and are left out.
 */
static int intra_op_thread(const struct pi_process_info *p, const struct pi_thread_info *t)
{
    /* a thread that served requests computed for them: its CPU is theirs already */
    if ((int)t->tid == p->header.pid || !t->cpu.measured ||
        pi_requests_served_by(p->requests, t->tid))
        return 0;
    for (int c = 0; c < PI_TIME_CPU; c++)
        if (t->time[c])
            return 0;
    return strncmp(t->name, "pt_autograd", 11) != 0 && strcmp(t->name, "pt_data_pin") != 0;
}

double pi_loop_intra_op_cpu_ns(const struct pi_loop *l, double span_ns, int *threads)
{
    const struct pi_process_info *p = l->process;
    double cpu = 0;
    *threads = 0;
    for (size_t i = 0; p && i < p->thread_count; i++) {
        const struct pi_thread_info *t = &p->threads[i];
        if (!intra_op_thread(p, t))
            continue;
        double wall = (double)pi_thread_wall_ns(p, t), ns = (double)pi_thread_cpu_ns(p, t);
        if (wall <= 0 || ns < wall / 100)
            continue; /* an idle thread: no pool that computed */
        /* its CPU spread evenly over its life: the part the span holds */
        cpu += span_ns < wall ? ns * span_ns / wall : ns;
        (*threads)++;
    }
    return cpu;
}

int pi_loop_is_python(const struct pi_analysis *a, const struct pi_loop *l)
{
    if (!l || !l->process)
        return 0;
    /* sampled, or by its command where sampling was off (PROFINJECT_PY_TIME_MS=0), or a
     * marked Python function ran (spans) */
    const char *command = l->process->command;
    return pi_python_time_of(a, l->process) != NULL || (command && strstr(command, "python")) ||
           l->process->spans != NULL;
}

/* "a (12%), b (8%)": the main thread's top functions by self time, imports left out. */
static void top_functions(const struct pi_python_profile *prof, char *out, size_t size)
{
    const struct pi_python_function *top[TOP_FUNCTIONS] = {0};
    out[0] = '\0';
    if (!prof || !prof->sampled_ns)
        return;
    for (size_t i = 0; i < prof->function_count; i++) {
        const struct pi_python_function *f = &prof->functions[i];
        if (pi_python_import_frame(f->file) || f->work_self_ns == 0)
            continue;
        for (int k = 0; k < TOP_FUNCTIONS; k++)
            if (!top[k] || f->work_self_ns > top[k]->work_self_ns) {
                memmove(&top[k + 1], &top[k], (TOP_FUNCTIONS - 1 - (size_t)k) * sizeof(*top));
                top[k] = f;
                break;
            }
    }
    size_t used = 0;
    for (int k = 0; k < TOP_FUNCTIONS && top[k] && used < size; k++)
        used += (size_t)snprintf(out + used, size - used, "%s%s %.0f%%", k ? ", " : "",
                                 top[k]->function,
                                 100.0 * (double)top[k]->work_self_ns / (double)prof->sampled_ns);
}

/* Whether @row is the loop's computing: on its own thread, a thread that served its
 * requests or one of its intra-op threads, outside imports. */
static int loop_operator(const struct pi_native_operator *row, const void *loop)
{
    const struct pi_process_info *p = ((const struct pi_loop *)loop)->process;
    if (strcmp(row->name, PI_NATIVE_IMPORTS) == 0)
        return 0;
    if ((int)row->tid == p->header.pid || pi_requests_served_by(p->requests, row->tid))
        return 1;
    for (size_t i = 0; i < p->thread_count; i++)
        if (p->threads[i].tid == row->tid)
            return intra_op_thread(p, &p->threads[i]);
    return 0;
}

/* The loop's native CPU as its samples found it. */
struct loop_operators {
    const char *over;  /* "the steady steps" or "the run" */
    char top[300];     /* "aten::addmm 61%, aten::mul 9%": shares of the working CPU */
    uint64_t sampled;  /* all of it, imports apart */
    uint64_t spinning; /* its pool's threads spinning for work between tasks */
};

/* The native operators that took most of the CPU of the loop's thread and its intra-op
 * threads together, as their CPU clocks sampled them over the steady steps where the loop
 * has them (not start-up's imports, compiling and collecting), else over the run: imports
 * left out, and the pool's spinning for work said apart (on a shared machine, a thread of
 * the pool spins while the one that hands out the work waits for a CPU: CPU, no operator). */
static void top_operators(const struct pi_loop *l, struct loop_operators *out)
{
    struct pi_native_operator *sums;
    uint64_t total;
    const struct pi_native_time *t = l->process->native_time;
    /* the samples of the steady steps, or of a serving loop's requests (file_pass.c) */
    int steady = t && t->steady_known && (l->steps > 0 || l->over_requests);
    out->over = !steady ? "the run" : l->over_requests ? "its requests" : "the steady steps";
    size_t count = pi_native_time_by_operator(t, loop_operator, l, steady, &sums, &total);
    out->top[0] = '\0';
    out->sampled = total;
    out->spinning = 0;
    for (size_t k = 0; k < count; k++)
        if (pi_native_operator_is_spinning(sums[k].name))
            out->spinning += sums[k].ns;
    uint64_t working = total - out->spinning;
    size_t used = 0;
    for (size_t k = 0, shown = 0; k < count && shown < TOP_FUNCTIONS && used < sizeof(out->top);
         k++) {
        if (pi_native_operator_is_spinning(sums[k].name))
            continue;
        char name[4 * PI_NATIVE_SHORT_CHARS];
        pi_native_short_name(sums[k].name, name, sizeof(name));
        used += (size_t)snprintf(out->top + used, sizeof(out->top) - used, "%s%s %.0f%%",
                                 shown++ ? ", " : "", name,
                                 100.0 * (double)sums[k].ns / (double)working);
    }
    free(sums);
}

const char *pi_verdict_speed_up_advice(const struct pi_analysis *a, const struct pi_loop *l)
{
    if (!pi_loop_is_python(a, l))
        return "no Python ran here, so there is no model to tune: speed up the program's own "
               "work; a tree of many short processes spends much of its time starting them "
               "(fewer processes, each doing more)";
    if (l->requests && (l->launches > 0 || l->gpu_ns >= 0)) /* inference is not training */
        return "the host's work sets the pace while the GPU waits: batch requests together "
               "(several inputs a call), run them under torch.inference_mode(), torch.compile "
               "or CUDA graphs to cut the Python and launches of each request";
    if (l->requests)
        return "serving on the CPU: batch requests together (several inputs a call, a "
               "pipeline's batch_size), run them under torch.inference_mode(), use the cores "
               "(torch.set_num_threads), a smaller or quantized model, or a GPU";
    if (l->launches > 0 || l->gpu_ns >= 0)
        return "the host's work sets the pace while the GPU waits: larger batches, "
               "torch.compile or CUDA graphs to cut per-step Python and launches, "
               "preprocessing moved to DataLoader workers";
    return "a CPU job computing: use the cores (torch.set_num_threads up to the physical "
           "cores, no other busy jobs beside it), larger batches, torch.compile, "
           "bfloat16 autocast on CPUs that support it, or a GPU";
}

double pi_loop_cpu_wait_share(const struct pi_loop *l)
{
    const struct pi_process_info *p = l ? l->process : NULL;
    if (!p || p->run_delay_samples < 2 || p->run_delay_last.ns <= p->run_delay_first.ns ||
        p->run_delay_last.delay_ns < p->run_delay_first.delay_ns)
        return -1;
    return (double)(p->run_delay_last.delay_ns - p->run_delay_first.delay_ns) /
           (double)(p->run_delay_last.ns - p->run_delay_first.ns);
}

double pi_loop_waited_for_pool_ns(const struct pi_loop *l, double span_ns, double unseen_ns,
                                  double *pool_ns, int *threads)
{
    *pool_ns = pi_loop_intra_op_cpu_ns(l, span_ns, threads);
    /* the kernel's run delay, over the run, says how much of it was the wait for a CPU */
    double waiting = pi_loop_cpu_wait_share(l) * span_ns;
    waiting = waiting < 0 ? 0 : waiting < unseen_ns ? waiting : unseen_ns;
    double blocked = unseen_ns - waiting;
    /* blocked, the loop's thread waited for its pool no longer than the pool computed */
    return *pool_ns < blocked ? *pool_ns : blocked;
}

/* What the loop computed: its thread's CPU, and its wait for the intra-op threads. */
struct computed {
    double main_cpu, pool, for_pool, unaccounted;
    int threads;
};

static void computed_of(const struct pi_loop *l, struct computed *c)
{
    double total = l->total_ns, waits = l->data_wait_ns + l->sync_ns;
    c->main_cpu = l->cpu_ns >= 0 ? l->cpu_ns : total - waits;
    c->unaccounted = total - waits - c->main_cpu;
    /* over its life the class is measured as such */
    if (l->steps == 0 && l->cpu_ns >= 0 && !l->over_requests)
        c->unaccounted = (double)pi_thread_time_ns(l->process, l->main, PI_TIME_OTHER);
    if (c->unaccounted < 0)
        c->unaccounted = 0;
    c->for_pool = pi_loop_waited_for_pool_ns(l, total, c->unaccounted, &c->pool, &c->threads);
}

double pi_loop_computed_ns(const struct pi_loop *l)
{
    if (!l || !l->main || l->cpu_ns < 0)
        return -1;
    struct computed c;
    computed_of(l, &c);
    return c.main_cpu + c.for_pool;
}

/* What else the requests' own figures support: generate()'s cache where it ran (a
 * tokenizer that took much of them is a finding of its own: verdict_tokenizer.c). */
static void serving_advice(const struct pi_requests *q, char *out, size_t size)
{
    out[0] = '\0';
    if (!q || !q->latency.total_ns)
        return;
    if (q->generate.calls)
        snprintf(out, size, "; for generate(): keep its KV cache (use_cache=True), and a "
                            "static cache with torch.compile (cache_implementation=\"static\") "
                            "cuts each token's time");
}

/* Who computed: "the serving loop of pid 7 computed 91% of the time inside its 200 requests:
 * its thread 1.23 s on a CPU", or the same of the loop's time and basis. */
static void computed_words(const struct pi_loop *l, double score, double main_cpu, char *out,
                           size_t size)
{
    const struct pi_requests *q = l->requests;
    int pid = l->process->header.pid;
    if (l->over_requests && q)
        snprintf(out, size,
                 "%s of pid %d computed %.0f%% of the time inside its %" PRIu64 " requests: %s "
                 "%.2f s on a CPU",
                 l->name, pid, 100 * score, q->latency.count,
                 q->threads == 1 ? "its thread" : "their threads", main_cpu / 1e9);
    else
        snprintf(out, size, "%s of pid %d computed %.0f%% of its time (%s): its thread %.2f s "
                            "on a CPU",
                 l->name, pid, 100 * score, l->basis, main_cpu / 1e9);
}

int pi_verdict_compute_bound(const struct pi_analysis *a, const struct pi_loop *l,
                             struct pi_finding *f)
{
    const struct pi_process_info *p = l->process;
    double total = l->total_ns;
    if (!l->main || total <= 0)
        return 0;
    struct computed c;
    computed_of(l, &c);
    double share = (c.main_cpu + c.for_pool) / total;
    if (share < PI_COMPUTE_BOUND_SHARE)
        return 0;
    f->kind = "compute-bound";
    f->score = share > 1 ? 1 : share;
    f->pid = p->header.pid;
    char top[200];
    top_functions(pi_python_time_of(a, p), top, sizeof(top));
    char pool_words[120] = "";
    if (c.threads)
        snprintf(pool_words, sizeof(pool_words), " and %d intra-op thread%s %.2f s", c.threads,
                 c.threads == 1 ? "" : "s", c.pool / 1e9);
    struct loop_operators ops;
    top_operators(l, &ops);
    double spinning = ops.sampled ? (double)ops.spinning / (double)ops.sampled : 0;
    int spins = spinning >= PI_POOL_SPINNING_SHARE;
    char spin_words[160] = "";
    if (spins)
        snprintf(spin_words, sizeof(spin_words),
                 "; its pool's threads spun for work %.0f%% of that sampled CPU", 100 * spinning);
    char computed[300], serving[400];
    computed_words(l, f->score, c.main_cpu, computed, sizeof(computed));
    serving_advice(l->requests, serving, sizeof(serving));
    snprintf(f->summary, sizeof(f->summary), "%s%s%s%s%s%s%s%s%s", computed, pool_words,
             top[0] ? "; most self time in " : "", top,
             ops.top[0] ? "; native operators by CPU over " : "", ops.top[0] ? ops.over : "",
             ops.top[0] ? " (imports and the pool's spinning apart): " : "", ops.top, spin_words);
    snprintf(f->advice, sizeof(f->advice), "%s%s%s", pi_verdict_speed_up_advice(a, l), serving,
             spins ? "; its intra-op threads spin while they wait for work: on a shared machine, "
                     "OMP_WAIT_POLICY=passive or fewer threads (torch.set_num_threads)"
                   : "");
    pi_finding_evidence(f, "cpu_share", f->score, "");
    pi_finding_evidence(f, "loop_s", total / 1e9, "s");
    pi_finding_evidence(f, "main_cpu_s", c.main_cpu / 1e9, "s");
    pi_finding_evidence(f, "intra_op_cpu_s", c.pool / 1e9, "s");
    pi_finding_evidence(f, "intra_op_threads", c.threads, "");
    pi_finding_evidence(f, "main_other_share", (c.unaccounted - c.for_pool) / total, "");
    pi_finding_evidence(f, "main_cpu_wait_share", pi_loop_cpu_wait_share(l), "");
    pi_finding_evidence(f, "native_sampled_cpu_s", (double)ops.sampled / 1e9, "s");
    pi_finding_evidence(f, "native_over_steady_steps", strcmp(ops.over, "the run") != 0, "");
    pi_finding_evidence(f, "pool_spinning_share", spinning, "");
    if (l->over_requests && l->requests) /* over the time inside them */
        pi_finding_evidence(f, "requests", (double)l->requests->latency.count, "");
    return 1;
}
