/*
 * section_steps.c - the training process's steps in every report: how
 * they were found, their time and where it went (getting input, CPU,
 * waiting on the GPU, other), its split across gradient accumulation's
 * micro-batches, warm-up, memory growth per step; in JSON
 * each process's steps; on the page every step as a stacked bar and the
 * step time over the run.
 *
 * The bars: each step's time getting input (waiting for it, receiving it),
 * blocked on the GPU (synchronisation and synchronous copies), computing by
 * the main thread's CPU clock, and the rest ("other": blocked in calls no
 * hook sees, or waiting for a CPU; all of the rest is CPU where the clock
 * was not read); the GPU work it launched as a mark beside. Steps clearly
 * slower than the steady steps' p95 are marked. Hovering a bar shows its
 * numbers. A long run is drawn in groups of consecutive steps (their
 * mean), so that the page stays small.
 */
#include "section_steps.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/host/evaluation_loops.h"
#include "analysis/host/span_steps.h"
#include "analysis/host/spans.h"
#include "analysis/host/steps.h"
#include "reports/format/figures.h"
#include "reports/format/format.h"
#include "reports/format/html_plot.h"
#include "verdicts/verdict.h"

/* The span that counts the steps ("AdamW.step"), NULL when none does (span_steps.h). */
static const char *steps_span(const struct pi_process_info *p)
{
    return p->steps_tid && p->spans && p->spans->steps_name ? p->spans->steps_name : NULL;
}

/* Steps from spans: the call that ends each, and its thread where not the main one. */
static const char *span_source(const struct pi_process_info *p, char *words, size_t size)
{
    const char *name = steps_span(p);
    /* without an optimizer: what the steps are, before the call's name */
    static const struct {
        const char *from, *words;
    } others[] = {
        {"backward", "one per backward call (no optimizer"},
        {PI_STEPS_FROM_BATCHES, "one per batch the loop took (no optimizer or backward"},
        {PI_STEPS_FROM_EVERY_BATCH,
         "one per batch the loop took (no optimizer, backward or model call"},
    };
    size_t k = 0;
    while (k + 1 < sizeof(others) / sizeof(others[0]) && strcmp(p->steps_from, others[k].from))
        k++;
    int n = strcmp(p->steps_from, "optimizer step") == 0
                ? snprintf(words, size, "one per optimizer step (%s)",
                           name ? name : "the optimizer's step")
                : snprintf(words, size, "%s%s%s)", others[k].words, name ? "; " : "",
                           name ? name : "");
    if (n > 0 && (size_t)n < size && p->steps_tid != (uint32_t)p->header.pid)
        snprintf(words + n, size - (size_t)n, " of thread %u", p->steps_tid);
    return words;
}

/* How the steps were found, in words (steps_from: file_pass.c, relay_steps.c,
 * span_steps.c); @words holds those that name a span. */
static const char *steps_source(const struct pi_process_info *p, char *words, size_t size)
{
    const char *from = p->steps_from ? p->steps_from : "";
    if (p->steps_tid)
        return span_source(p, words, size);
    if (strcmp(from, "NVTX") == 0)
        return "one per top-level NVTX range of the main thread";
    if (strcmp(from, "CUDA read-back") == 0)
        return "one per small device-to-host read-back of the main thread, like loss.item()";
    if (strcmp(from, "pin-memory thread") == 0)
        return "one per batch the pin-memory thread received for the main thread";
    if (strstr(from, "one read-back a step"))
        return strncmp(from, "pin-memory", 10) == 0
                   ? "one per loss read-back of the main thread, one per batch of the pin-memory "
                     "thread"
                   : "one per loss read-back of the main thread, one per batch of the data loader";
    return "one per batch received from the data loader";
}

/* Memory growth over the steady steps, per step (memory_growth.c); where it starts when it is
 * more than noise */
#define NOTABLE_PER_STEP (64.0 * 1024)
static void print_growth(FILE *out, const struct pi_process_info *p)
{
    const struct pi_memory_growth *g = &p->growth;
    if (!g->by_steps)
        return;
    fprintf(out, "  memory growth     device %.2f MiB/step", g->device_bytes_per_step / 1048576.0);
    if (g->device_start_step && g->device_bytes_per_step >= NOTABLE_PER_STEP)
        fprintf(out, " from step %" PRIu64, g->device_start_step);
    fprintf(out, ", RSS %.2f MiB/step", g->rss_bytes_per_step / 1048576.0);
    if (g->rss_start_step && g->rss_bytes_per_step >= NOTABLE_PER_STEP)
        fprintf(out, " from step %" PRIu64, g->rss_start_step);
    fprintf(out, " (over the %" PRIu64 " steady steps)\n", g->steady_steps);
}

/* Gradient accumulation: the backward calls of the median step, how long each micro-batch
 * took and the rest of the step after the last one, and the micro-batches' share of it. */
static void print_micro_batches(FILE *out, const struct pi_steps *s)
{
    struct pi_histogram *each = (struct pi_histogram *)&s->micro_batch_ns;
    struct pi_histogram *after = (struct pi_histogram *)&s->after_micro_batches_ns;
    fprintf(out, "  micro-batches     %.3g a step", s->micro_batches_p50);
    if (each->count && after->count)
        fprintf(out, ": each p50 %s, p99 %s; after the last %s p50 (optimizer step and the "
                     "rest); %.0f%% of the step",
                pi_format_ns(pi_histogram_quantile(each, 0.5)),
                pi_format_ns(pi_histogram_quantile(each, 0.99)),
                pi_format_ns(pi_histogram_quantile(after, 0.5)),
                100 * pi_steps_micro_batch_share(s));
    fputc('\n', out);
}

/* A rank's CPU share above holds its collective waits (lock waits of the main thread, NCCL
 * kernels): said apart, as the RANKS section splits them. */
static void print_rank_waits(FILE *out, const struct pi_process_info *p, double total)
{
    const struct pi_steps *s = &p->steps;
    double collective = 0;
    for (uint64_t i = s->warmup; i < s->count; i++) {
        struct pi_step_figures f;
        if (pi_steps_steady(s, i) && pi_steps_figures(s, i, &f))
            collective += (double)f.lock;
    }
    if (collective > 0)
        fprintf(out, "  collectives       %.0f%% of step time waiting in them (rank %ld; within the "
                     "CPU share above)\n",
                100 * collective / total, p->rank);
}

void pi_report_steps_text(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info *p = pi_training_process(a);
    if (!p || p->steps.count == 0)
        return;
    const struct pi_steps *s = &p->steps;
    uint64_t steady = pi_steps_steady_count(s);
    char words[400];
    fprintf(out, "\nSTEPS (pid %d, %s)\n", p->header.pid, steps_source(p, words, sizeof(words)));
    fprintf(out, "  %" PRIu64 " steps: %" PRIu64 " warm-up, %" PRIu64 " steady", s->count,
            s->warmup, steady);
    if (steady && s->steady_total_ns)
        fprintf(out, " at %.2f steps/s", (double)steady * 1e9 / (double)s->steady_total_ns);
    if (s->evaluation_steps)
        fprintf(out, "; %" PRIu64 " holding an evaluation loop (%s), not in the steady figures",
                s->evaluation_steps, pi_format_ns((double)s->evaluation_steps_ns));
    fprintf(out, "\n");
    if (p->steps_tid && s->micro_batches_p50 > 1) /* gradient accumulation */
        print_micro_batches(out, s);
    struct pi_histogram *h = (struct pi_histogram *)&s->steady_ns;
    if (h->count) {
        fprintf(out, "  steady step time  p50 %s  p90 %s  p99 %s  max %s\n",
                pi_format_ns(pi_histogram_quantile(h, 0.5)),
                pi_format_ns(pi_histogram_quantile(h, 0.9)),
                pi_format_ns(pi_histogram_quantile(h, 0.99)), pi_format_ns((double)h->max));
        double total = (double)s->steady_total_ns;
        fprintf(out, "  steady split      waiting for data %.0f%%  ",
                100 * s->steady_wait_ns / total);
        if (s->steady_receive_ns) /* in next(), not blocked: unpickling, rebuilding tensors */
            fprintf(out, "receiving it %.0f%%  ", 100 * s->steady_receive_ns / total);
        fprintf(out, "CPU %.0f%%  sync %.0f%%  ", 100 * pi_steps_steady_cpu_ns(s) / total,
                100 * s->steady_sync_ns / total);
        if (s->steady_cpu_measured) /* blocked where no hook sees, or waiting for a CPU */
            fprintf(out, "other %.0f%%  ", 100 * pi_steps_steady_other_ns(s) / total);
        fprintf(out, "(GPU busy %.0f%% of step time, alongside)\n", 100 * s->steady_gpu_ns / total);
        if (p->rank >= 0)
            print_rank_waits(out, p, total);
    }
    if (p->gpu_busy_ns && p->end_ns > p->start_ns)
        fprintf(out, "  GPU busy          %.0f%% of the process's run (%s of GPU work)\n",
                100.0 * (double)p->gpu_busy_ns / (double)(p->end_ns - p->start_ns),
                pi_format_ns((double)p->gpu_busy_ns));
    if (s->warmup && s->warmup_total_ns)
        fprintf(out, "  warm-up           %" PRIu64 " steps in %s, waiting for data %.0f%%\n",
                s->warmup, pi_format_ns((double)s->warmup_total_ns),
                100.0 * s->warmup_wait_ns / s->warmup_total_ns);
    const struct pi_evaluation_loops *e = p->evaluation_loops;
    if (e && e->count + e->unkept) /* the steps that hold one are that much longer */
        fprintf(out, "  evaluation loops  %" PRIu64 " (module calls without autograd between "
                     "training steps), %s in all\n",
                (uint64_t)e->count + e->unkept, pi_format_ns((double)e->total_ns));
    print_growth(out, p);
}

static cJSON *steps_json(struct pi_steps *s)
{
    cJSON *steps = cJSON_CreateObject();
    cJSON_AddNumberToObject(steps, "count", (double)s->count);
    cJSON_AddNumberToObject(steps, "warmup", (double)s->warmup);
    /* past the warm-up, holding an evaluation loop: in neither "warmup" nor "steady" */
    cJSON_AddNumberToObject(steps, "evaluation_steps", (double)s->evaluation_steps);
    cJSON *steady = cJSON_AddObjectToObject(steps, "steady");
    pi_quantiles_json(steady, &s->steady_ns);
    cJSON_AddNumberToObject(steady, "data_wait_ns", (double)s->steady_wait_ns);
    cJSON_AddNumberToObject(steady, "data_receive_ns", (double)s->steady_receive_ns);
    cJSON_AddNumberToObject(steady, "sync_ns", (double)s->steady_sync_ns);
    cJSON_AddNumberToObject(steady, "gpu_ns", (double)s->steady_gpu_ns);
    cJSON_AddNumberToObject(steady, "cpu_ns", (double)pi_steps_steady_cpu_ns(s));
    cJSON_AddBoolToObject(steady, "cpu_measured", s->steady_cpu_measured);
    cJSON_AddNumberToObject(steady, "other_ns", (double)pi_steps_steady_other_ns(s));
    cJSON *warmup = cJSON_AddObjectToObject(steps, "warmup_steps");
    pi_quantiles_json(warmup, &s->warmup_ns);
    cJSON_AddNumberToObject(warmup, "data_wait_ns", (double)s->warmup_wait_ns);
    return steps;
}

/* {"count", "total_ns", "loops": [{"start_ns", "end_ns", "forwards"}]}: the evaluation loops
 * inside training (analysis/host/evaluation_loops.h); none: nothing */
static void evaluation_loops_json(cJSON *steps, const struct pi_evaluation_loops *e)
{
    if (!e)
        return;
    cJSON *o = cJSON_AddObjectToObject(steps, "evaluation_loops");
    cJSON_AddNumberToObject(o, "count", (double)(e->count + e->unkept));
    cJSON_AddNumberToObject(o, "total_ns", (double)e->total_ns);
    cJSON *loops = cJSON_AddArrayToObject(o, "loops");
    for (size_t i = 0; i < e->count; i++) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "start_ns", (double)e->loops[i].start_ns);
        cJSON_AddNumberToObject(row, "end_ns", (double)e->loops[i].end_ns);
        cJSON_AddNumberToObject(row, "forwards", (double)e->loops[i].forwards);
        cJSON_AddItemToArray(loops, row);
    }
}

void pi_report_steps_json(cJSON *process, struct pi_process_info *p)
{
    cJSON *steps = steps_json(&p->steps);
    cJSON_AddStringToObject(steps, "found_from", p->steps_from ? p->steps_from : "none");
    if (p->steps_tid) { /* from spans: which calls, on which thread, with how many backward */
        const char *name = steps_span(p);
        if (name)
            cJSON_AddStringToObject(steps, "span", name);
        cJSON_AddNumberToObject(steps, "tid", p->steps_tid);
        cJSON *micro = cJSON_AddObjectToObject(steps, "micro_batches");
        cJSON_AddNumberToObject(micro, "per_step_p50", p->steps.micro_batches_p50);
        cJSON_AddNumberToObject(micro, "total", (double)p->steps.micro_batches);
        /* the split of the steps with two or more (span_steps.h) */
        pi_quantiles_json(cJSON_AddObjectToObject(micro, "duration"), &p->steps.micro_batch_ns);
        pi_quantiles_json(cJSON_AddObjectToObject(micro, "tail"),
                          &p->steps.after_micro_batches_ns);
        cJSON_AddNumberToObject(micro, "share", pi_steps_micro_batch_share(&p->steps));
    }
    evaluation_loops_json(steps, p->evaluation_loops);
    cJSON_AddItemToObject(process, "steps", steps);
}

/* at most this many points in the step time plot */
#define MAX_POINTS 1000
/* at most this many bars: a 100,000-step run is drawn in groups */
#define MAX_BARS 400

/* A step slower than the steady p95 is marked only when it is also this much slower than the
 * steady median: steps equal within noise have a p95 too. */
#define SLOW_OVER_MEDIAN 1.2

enum { PART_CPU, PART_OTHER, PART_SYNC, PART_WAIT, PARTS };
static const char *const colors[PARTS] = {"#4e79a7" /* CPU */, "#bab0ac" /* other */,
                                          "#e15759" /* GPU wait */, "#f28e2b" /* input wait */};
static const char *const names[PARTS] = {"CPU", "other",
                                         "blocked on the GPU", "getting input"};

struct bar {
    double total, wait, sync, gpu; /* means over the group, ns */
    double other;                  /* of the rest, not on the CPU by its clock */
    double receive;                /* of getting input, not blocked: receiving the batch */
    uint64_t first, last;          /* step numbers, from 1 */
    int slow, warmup;
};

static void draw_bar(FILE *out, const struct bar *b, double x, double width, double longest)
{
    double rest = b->total - b->wait - b->sync, cpu = rest - b->other;
    double parts[PARTS] = {cpu > 0 ? cpu : 0, b->other, b->sync, b->wait}, y = MARGIN + PLOT_H;
    fprintf(out, "<g class=\"step-bar%s%s\"><title>step %" PRIu64, b->slow ? " slow" : "",
            b->warmup ? " warmup" : "", b->first);
    if (b->last != b->first)
        fprintf(out, " to %" PRIu64 " (mean)", b->last);
    fprintf(out, ": %s; getting input %s (receiving %s), blocked on the GPU %s, CPU %s, "
                 "other %s; GPU work %s%s%s</title>\n",
            pi_format_ns(b->total), pi_format_ns(b->wait), pi_format_ns(b->receive),
            pi_format_ns(b->sync),
            pi_format_ns(parts[PART_CPU]), pi_format_ns(b->other), pi_format_ns(b->gpu),
            b->slow ? "; slower than p95" : "", b->warmup ? "; warm-up" : "");
    for (int k = 0; k < PARTS; k++) {
        double h = PLOT_H * parts[k] / longest;
        y -= h;
        fprintf(out, "<rect class=\"segment-%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" "
                     "height=\"%.2f\" fill=\"%s\"%s/>\n",
                k, x, y, width, h, colors[k], b->warmup ? " fill-opacity=\"0.5\"" : "");
    }
    if (b->gpu > 0)
        fprintf(out, "<rect class=\"gpu-mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"1.5\" "
                     "fill=\"#222\"/>\n",
                x, MARGIN + PLOT_H - PLOT_H * (b->gpu < longest ? b->gpu : longest) / longest,
                width);
    if (b->slow)
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"#c00\" "
                     "text-anchor=\"middle\">&#9660;</text>\n", x + width / 2, MARGIN - 3);
    fputs("</g>\n", out);
}

void pi_report_steps_html(FILE *out, const struct pi_analysis *a)
{
    const struct pi_process_info *p = pi_training_process(a);
    const struct pi_steps *s = p ? &p->steps : NULL;
    if (!s || !s->count) {
        fputs("<h2>Each step</h2>\n<p id=\"step-bars-none\">no training steps were found</p>\n",
              out);
        return;
    }
    struct pi_histogram *steady = (struct pi_histogram *)&s->steady_ns;
    double p95 = steady->count ? pi_histogram_quantile(steady, 0.95) : 0;
    double slow_above = p95 > SLOW_OVER_MEDIAN * pi_histogram_quantile(steady, 0.5)
                            ? p95
                            : SLOW_OVER_MEDIAN * pi_histogram_quantile(steady, 0.5);
    uint64_t per = (s->count + MAX_BARS - 1) / MAX_BARS, bars = (s->count + per - 1) / per;
    double longest = 1;
    struct pi_step_figures f;
    for (uint64_t i = 0; pi_steps_figures(s, i, &f); i++)
        longest = (double)(f.end - f.start) > longest ? (double)(f.end - f.start) : longest;
    char title[200];
    snprintf(title, sizeof(title), "Each step (pid %d, %" PRIu64 " steps%s; slower than the "
             "steady p95 and %.1fx the median marked above)", p->header.pid, s->count,
             per > 1 ? ", in groups of consecutive steps" : "", SLOW_OVER_MEDIAN);
    pi_html_axis_frame(out, "step-bars", title, "step", "step time");
    fprintf(out, "<text class=\"y-top\" x=\"%d\" y=\"%d\" font-size=\"11\" "
                 "text-anchor=\"end\">%s</text>\n",
            MARGIN - 4, MARGIN + 4, pi_format_ns(longest));
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%" PRIu64 "</text>\n",
            MARGIN + PLOT_W, MARGIN + PLOT_H + 14, s->count);
    for (int k = 0; k < PARTS; k++)
        fprintf(out, "<rect class=\"legend-%d\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
                     "fill=\"%s\"/><text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n",
                k, MARGIN + PLOT_W + 8, MARGIN + 16 * k, colors[k], MARGIN + PLOT_W + 22,
                MARGIN + 9 + 16 * k, names[k]);
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"2\" fill=\"#222\"/>"
                 "<text x=\"%d\" y=\"%d\" font-size=\"11\">GPU work</text>\n",
            MARGIN + PLOT_W + 8, MARGIN + 16 * PARTS + 4, MARGIN + PLOT_W + 22,
            MARGIN + 16 * PARTS + 9);
    double width = (double)PLOT_W / (double)bars;
    for (uint64_t b = 0; b < bars; b++) {
        struct bar bar = {0};
        uint64_t n = 0;
        for (uint64_t i = b * per; i < (b + 1) * per && pi_steps_figures(s, i, &f); i++, n++) {
            double total = (double)(f.end - f.start);
            bar.total += total;
            bar.wait += (double)(f.wait + f.receive);
            bar.receive += (double)f.receive;
            bar.sync += (double)f.sync;
            bar.gpu += (double)f.gpu;
            if (f.cpu != PI_STEP_CPU_UNKNOWN) {
                double rest = total - (double)f.wait - (double)f.receive - (double)f.sync;
                bar.other += rest > (double)f.cpu ? rest - (double)f.cpu : 0;
            }
            bar.slow |= i >= s->warmup && p95 > 0 && total > slow_above;
            bar.warmup |= i < s->warmup;
            bar.first = bar.first ? bar.first : i + 1;
            bar.last = i + 1;
        }
        if (!n)
            break;
        bar.total /= (double)n;
        bar.wait /= (double)n;
        bar.sync /= (double)n;
        bar.gpu /= (double)n;
        bar.other /= (double)n;
        bar.receive /= (double)n;
        draw_bar(out, &bar, MARGIN + width * (double)b, width > 1.5 ? width * 0.85 : width,
                 longest);
    }
    fputs("</svg>\n", out);
}

void pi_report_step_time_html(FILE *out, const struct pi_analysis *a,
                               const struct pi_process_info *p)
{
    uint64_t start, end, longest = 1, first = 0, last = 1;
    const struct pi_steps *s = &p->steps;
    for (uint64_t i = 0; pi_steps_span(s, i, &start, &end); i++) {
        longest = end - start > longest ? end - start : longest;
        first = i == 0 ? start : first;
        last = end;
    }
    if (!s->count) {
        fprintf(out, "<h2>Step time over the run</h2>\n<p id=\"step-time-none\">no steps were "
                     "found in pid %d (no DataLoader batches nor NVTX ranges seen)</p>\n",
                p->header.pid);
        return;
    }
    char title[200];
    snprintf(title, sizeof(title), "Step time over the run (pid %d, %" PRIu64 " steps, %s)",
             p->header.pid, s->count, p->steps_from ? p->steps_from : "?");
    pi_html_axis_frame(out, "step-time", title, "step start (s)", "step time (ms)");
    double span = last > first ? (double)(last - first) : 1;
    pi_html_axis_ends(out, (double)(last - first) / 1e9, (double)longest / 1e6);
    /* a point a step; past MAX_POINTS, a point for the slowest step of each group of
     * consecutive steps, so that the page stays small whatever the run's length */
    uint64_t per = (s->count + MAX_POINTS - 1) / MAX_POINTS;
    for (uint64_t g = 0; g * per < s->count; g++) {
        uint64_t slowest = g * per, slow_start = 0, slow_end = 0;
        for (uint64_t i = g * per; i < (g + 1) * per && pi_steps_span(s, i, &start, &end); i++)
            if (i == g * per || end - start > slow_end - slow_start) {
                slowest = i;
                slow_start = start;
                slow_end = end;
            }
        char which[96];
        if (per > 1)
            snprintf(which, sizeof(which), "slowest of steps %" PRIu64 " to %" PRIu64 ": step %" PRIu64,
                     g * per + 1, (g + 1) * per < s->count ? (g + 1) * per : s->count, slowest + 1);
        else
            snprintf(which, sizeof(which), "step %" PRIu64, slowest + 1);
        fprintf(out, "<circle class=\"step-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\">"
                     "<title>%s%s: %.2f ms at %.3f s</title></circle>\n",
                MARGIN + PLOT_W * (double)(slow_start - first) / span,
                MARGIN + PLOT_H - PLOT_H * (double)(slow_end - slow_start) / (double)longest,
                slowest < s->warmup ? "#ff7f0e" : "#1f77b4", which,
                slowest < s->warmup ? " (warm-up)" : "", (double)(slow_end - slow_start) / 1e6,
                pi_html_seconds(a->base_ns, slow_start));
    }
    fputs("</svg>\n", out);
}
