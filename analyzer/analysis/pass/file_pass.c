/* file_pass.c - one trace file read into its process, then committed in file order (see file_pass.h). */
#include "file_pass.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/gpu/gpu_timing.h"
#include "analysis/host/relay_steps.h"
#include "analysis/host/evaluation_loops.h"
#include "analysis/host/requests.h"
#include "analysis/host/span_steps.h"
#include "analysis/host/spans.h"
#include "analysis/host/steps.h"
#include "analysis/host/thread_cpu.h"
#include "analysis/host/thread_timeline.h"
#include "analysis/host/threads.h"
#include "analysis/host/working_span.h"
#include "analysis/memory/memory_growth.h"
#include "analysis/pass/record_dispatch.h"
#include "analysis/pass/summary_events.h"
#include "analysis/pass/training_process.h"
#include "analysis/ranks/ranks.h"
#include "analysis/sites/python_sites.h"
#include "analysis/sites/python_lines.h"
#include "analysis/sites/native_time.h"
#include "analysis/sites/phases.h"
#include "analysis/sites/python_time.h"
#include "profinject/rank_identity.h"

void pi_file_pass_progress(const struct pi_analysis *a, uint64_t done)
{
    if (!a->options.progress || a->bytes_total < (64u << 20))
        return;
    fprintf(stderr, "\rprofinject-analyze: %3.0f%% of %.0f MB", 100.0 * done / a->bytes_total,
            a->bytes_total / 1e6);
}

static char *copy_or_empty(const char *text)
{
    return strdup(text ? text : "");
}

/* With capture windows, the process's span is theirs: samples go on while paused. */
static void settle_windows(struct pi_process_info *p)
{
    if (!p->window_count)
        return;
    if (p->window_open)
        p->windows[p->window_count - 1].end_ns = p->end_ns;
    p->window_ns = 0;
    for (size_t i = 0; i < p->window_count; i++)
        p->window_ns += p->windows[i].end_ns - p->windows[i].start_ns;
    p->start_ns = p->windows[0].start_ns;
    p->end_ns = p->windows[p->window_count - 1].end_ns;
}

/* Steps through a relay thread or the read-backs; the main thread's waits for the relay's
 * batches become data waits. */
static void relay_steps_finish(struct pi_analysis *a, struct pi_process_info *p)
{
    uint64_t relay_wait = pi_relay_finish(p, a->options.warmup_steps);
    p->relay_tid = pi_relay_thread(p);
    /* nothing reads the detection's state past the file: 3.6 KB in every rank of a job */
    pi_relay_free(p);
    struct pi_thread_info *main = pi_main_thread(p);
    if (!main || !relay_wait)
        return;
    if (relay_wait > main->time[PI_TIME_LOCK_WAIT])
        relay_wait = main->time[PI_TIME_LOCK_WAIT];
    main->time[PI_TIME_LOCK_WAIT] -= relay_wait;
    main->time[PI_TIME_DATA_WAIT] += relay_wait;
}

static void start_process(struct pi_analysis *a, struct pi_process_info *p,
                          const struct pi_reader *reader)
{
    const struct pi_trace_info *info = pi_reader_info(reader);
    p->header = info->header;
    p->command = copy_or_empty(info->strings[PI_HDR_CMDLINE]);
    p->host = copy_or_empty(info->strings[PI_HDR_HOSTNAME]);
    p->cgroup = copy_or_empty(info->strings[PI_HDR_CGROUP]);
    p->identity = copy_or_empty(info->strings[PI_HDR_IDENTITY]);
    p->rank = pi_identity_rank(p->identity);
    p->start_ns = p->end_ns = info->header.start_monotonic_ns;
    pi_histogram_init(&p->steps.steady_ns, a->options.exact);
    pi_histogram_init(&p->steps.warmup_ns, a->options.exact);
    pi_histogram_init(&p->nvtx_steps.steady_ns, a->options.exact);
    pi_histogram_init(&p->nvtx_steps.warmup_ns, a->options.exact);
    /* string ids are per file: the lookups by id start empty */
    for (int w = 0; w < 3; w++)
        if (a->by_string_id[w])
            memset(a->by_string_id[w], 0, a->by_string_capacity[w] * sizeof(void *));
}

/* The file is read: what is settled at its end, while its strings are known. */
static void finish_process(struct pi_analysis *a, struct pi_process_info *p,
                           const struct pi_reader *reader)
{
    settle_windows(p);
    pi_steps_receipts_finish(&p->steps);
    pi_steps_finish(&p->steps, a->options.warmup_steps);
    pi_steps_finish(&p->nvtx_steps, a->options.warmup_steps);
    p->steps_from = p->steps.count ? "data loader" : NULL;
    relay_steps_finish(a, p);
    if (!p->steps.count && p->nvtx_steps.count >= 2) {
        struct pi_steps dataloader = p->steps;
        p->steps = p->nvtx_steps;
        p->nvtx_steps = dataloader;
        p->steps_from = "NVTX";
    }
    /* evaluation loops first: the steps that hold one are not steady steps */
    pi_evaluation_loops_finish_file(p);
    /* the framework's own optimizer steps or backward calls, where marked: exact, they win */
    pi_span_steps_finish(p, reader, a->options.warmup_steps);
    pi_spans_finish_file(p, reader);
    pi_requests_finish_file(p, reader);
    /* the main thread's clock splits the main thread's steps only */
    if (!p->steps_tid || p->steps_tid == (uint32_t)p->header.pid)
        pi_steps_measure_cpu(&p->steps, &p->main_cpu);
    struct pi_thread_info *main_thread = pi_main_thread(p);
    if (main_thread && !p->window_count) /* between windows, waits were not recorded */
        pi_thread_timeline_cpu(main_thread, p->header.start_monotonic_ns, &p->main_cpu);
    /* a process killed before its main thread's end was recorded (SIGKILL, a hang ended by
     * a signal): its clock's last sample, not all its time outside recorded waits, which
     * a thread blocked where no hook sees would have counted as computing */
    if (main_thread && !main_thread->cpu.measured && !p->window_count && p->main_cpu.count)
        pi_thread_cpu_end(&main_thread->cpu, p->main_cpu.at[p->main_cpu.count - 1].cpu_ns);
    /* up to the fatal signal: the last sample, as the process ends, holds the handler's own
     * work, which ran on the main thread when the signal came to it (a blocked thread's last
     * seconds read as running when a periodic sample fell just before) */
    p->main_still_ns = pi_clock_samples_still_ns(
        &p->main_cpu, p->fatal.seen && p->fatal.ns && p->fatal.ns < p->end_ns ? p->fatal.ns : p->end_ns);
    pi_working_span_clock(p);
    pi_clock_samples_free(&p->main_cpu);
    pi_memory_growth_steady_start(p);
    pi_gpu_finish_process(a, reader, p);
    pi_memory_growth(p);
    pi_python_sites_finish_file(a, reader);
    pi_python_time_finish_file(a, reader);
    pi_python_lines_finish_file(p, reader);
    struct pi_step_bounds bounds = {0, 0, 0, NULL, 0};
    const struct pi_steps *steps = &p->steps;
    if (steps->count) {
        bounds.first_start_ns = pi_steps_start_ns(steps, 0);
        bounds.steady_start_ns =
            steps->warmup < steps->count ? pi_steps_start_ns(steps, steps->warmup) : bounds.first_start_ns;
        bounds.last_end_ns = pi_steps_end_ns(steps, steps->count - 1);
    }
    /* the steady steps' native samples: where there are steady steps past the warm-up; else
     * a serving process's from its first request to its last (not its start-up's) */
    int steady = steps->count > steps->warmup + 1;
    uint64_t from = steady ? bounds.steady_start_ns : 0, to = steady ? bounds.last_end_ns : 0;
    if (!steady && p->requests) {
        from = p->requests->first_start_ns;
        to = p->requests->last_end_ns;
    }
    pi_native_time_finish_file(p, reader, from, to);
    const struct pi_evaluation_loops *e = p->evaluation_loops;
    struct pi_phase_window *evaluation = e && e->count ? calloc(e->count, sizeof(*evaluation)) : NULL;
    for (size_t i = 0; evaluation && i < e->count; i++)
        evaluation[i] = (struct pi_phase_window){e->loops[i].start_ns, e->loops[i].end_ns};
    bounds.evaluation = evaluation;
    bounds.evaluation_count = evaluation ? e->count : 0;
    pi_phases_finish_file(p, reader, &bounds);
    free(evaluation);
    pi_threads_trim(p);
}

void *pi_file_pass_open_observer(const struct pi_analysis_options *options)
{
    const struct pi_analysis_observer *observer = options->observer;
    if (!observer)
        return NULL;
    return observer->open_file ? observer->open_file(observer->context) : observer->context;
}

void pi_file_pass_inherit(const struct pi_analysis *a, struct pi_process_info *p,
                          struct pi_reader *reader, FILE *messages)
{
    char why[600];
    if (!a->lineage || pi_lineage_attach(a->lineage, reader, why, sizeof(why)) == 0)
        return;
    p->inherited_unresolved = strdup(why);
    fprintf(messages,
            "profinject-analyze: %s: warning: the names, paths and stacks it inherited from "
            "its parent (ids below %u) are unresolved and read as unknown: %s\n",
            pi_reader_path(reader), pi_reader_info(reader)->inherited_below, why);
}

int pi_file_pass_read(struct pi_analysis *a, struct pi_process_info *p, struct pi_reader *reader,
                      void *observer_file, FILE *messages)
{
    start_process(a, p, reader);
    const struct pi_analysis_observer *observer = observer_file ? a->options.observer : NULL;
    if (observer && observer->process)
        observer->process(observer_file, a, p);
    uint64_t done_before = a->bytes_done;
    struct pi_event ev;
    int got;
    uint64_t n = 0;
    while ((got = pi_reader_next(reader, &ev)) == PI_READ_EVENT) {
        p->records++;
        if (pi_record_has_time(ev.rec.kind)) {
            if (ev.ts_ns < p->start_ns)
                p->start_ns = ev.ts_ns;
            if (ev.ts_ns + ev.dur_ns > p->end_ns)
                p->end_ns = ev.ts_ns + ev.dur_ns;
        }
        if (!pi_summary_replayed(p, &ev)) /* replays: detail the summaries already count */
            pi_record_dispatch(a, reader, p, &ev);
        if (observer && observer->event)
            observer->event(observer_file, a, reader, p, &ev);
        if ((++n & 0xfffff) == 0)
            pi_file_pass_progress(a, done_before + pi_reader_bytes_read(reader));
    }
    a->bytes_done = done_before + pi_reader_bytes_read(reader);
    p->truncated = pi_reader_truncated(reader, NULL, NULL);
    struct pi_reader_damage damage;
    if (pi_reader_damage(reader, &damage)) {
        p->damaged_bytes = damage.bytes;
        p->damaged_frames = damage.frames;
    }
    finish_process(a, p, reader);
    if (observer && observer->process_end)
        observer->process_end(observer_file, a, p);
    if (got == PI_READ_ERROR)
        fprintf(messages, "profinject-analyze: %s\n", pi_reader_error(reader));
    pi_reader_warn_truncated(messages, reader);
    return got == PI_READ_ERROR ? -1 : 0;
}

void pi_file_pass_commit(struct pi_analysis *a, struct pi_process_info *p, void *observer_file)
{
    pi_gpu_timing_settle(a, p);
    const struct pi_analysis_observer *observer = a->options.observer;
    if (observer_file && observer->commit_file)
        observer->commit_file(observer->context, observer_file, a, p);
    /* after the observer: the export writes each step of every rank */
    if (pi_ranks_add(a, p))
        pi_training_keep_figures(a, p);
    pi_thread_timelines_settle(a, p);
    a->records += p->records;
    a->lost += p->lost;
    a->strings_lost += p->strings_lost;
    a->inherited_unresolved += p->inherited_unresolved != NULL;
    a->damaged_files += p->damaged_bytes || p->damaged_frames;
    a->damaged_bytes += p->damaged_bytes;
    a->damaged_frames += p->damaged_frames;
    if (p->start_ns < a->base_ns)
        a->base_ns = p->start_ns;
    if (p->end_ns > a->end_ns)
        a->end_ns = p->end_ns;
}
