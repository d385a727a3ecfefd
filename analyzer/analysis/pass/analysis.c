/*
 * analysis.c - the pass over the trace files: the headers first (the
 * earliest start is the time line's origin), then every file read whole
 * and committed in file order (file_pass.c), one after the other on this
 * thread, or by several threads when asked (parallel_pass.c); then what
 * needs every file (the ranks' straggler, the tree's memory peak).
 */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/gpu/gpu_analysis.h"
#include "analysis/host/relay_steps.h"
#include "analysis/host/evaluation_loops.h"
#include "analysis/host/requests.h"
#include "analysis/host/span_steps.h"
#include "analysis/host/spans.h"
#include "analysis/host/thread_timeline.h"
#include "analysis/host/working_span.h"
#include "analysis/pass/file_pass.h"
#include "analysis/pass/job_stop.h"
#include "analysis/pass/parallel_pass.h"
#include "analysis/ranks/ranks.h"
#include "analysis/sites/call_sites.h"
#include "analysis/sites/python_sites.h"
#include "analysis/sites/python_lines.h"
#include "analysis/sites/native_time.h"
#include "analysis/sites/phases.h"
#include "analysis/sites/python_time.h"

const char *const pi_time_class_names[PI_TIME_CLASS_COUNT] = {
    "data_wait", "file_io", "other_io", "lock_wait", "sync", "sleep", "cpu", "other"};

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Every file on this thread, one after the other, straight into @a. */
static void one_by_one(struct pi_analysis *a, char **paths, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        char error[600];
        struct pi_reader *reader = pi_reader_open(paths[i], error, sizeof(error));
        if (!reader) {
            fprintf(stderr, "profinject-analyze: %s\n", error);
            a->bad_input = 1;
            continue;
        }
        struct pi_process_info *p = &a->processes[a->process_count++];
        p->path = strdup(paths[i]);
        void *observer_file = pi_file_pass_open_observer(&a->options);
        pi_file_pass_inherit(a, p, reader, stderr);
        if (pi_file_pass_read(a, p, reader, observer_file, stderr) != 0)
            a->bad_input = 1;
        pi_reader_close(reader);
        pi_file_pass_commit(a, p, observer_file);
    }
}

int pi_analysis_begin(struct pi_analysis *a, const struct pi_analysis_options *options, size_t count)
{
    memset(a, 0, sizeof(*a));
    a->options = *options;
    a->base_ns = UINT64_MAX;
    a->gpu.timing_source = -1;
    pi_latency_table_init(&a->calls, options->exact);
    pi_latency_table_init(&a->files, options->exact);
    a->processes = calloc(count ? count : 1, sizeof(*a->processes));
    if (!a->processes)
        return -1;
    return 0;
}

int pi_analysis_run(struct pi_analysis *a, const struct pi_analysis_options *options, char **paths,
                    size_t count)
{
    if (pi_analysis_begin(a, options, count) != 0)
        return -1;
    /* headers first: the base time of the Chrome trace is the earliest start; how far
     * each parent's file is needed for its fork children's inherited ids */
    a->lineage = pi_lineage_new(paths, count);
    for (size_t i = 0; i < count; i++) {
        char error[600];
        struct pi_reader *reader = pi_reader_open(paths[i], error, sizeof(error));
        if (!reader)
            continue;
        if (a->lineage)
            pi_lineage_want(a->lineage, reader);
        uint64_t start = pi_reader_info(reader)->header.start_monotonic_ns;
        if (start < a->base_ns)
            a->base_ns = start;
        a->bytes_total += file_size(paths[i]);
        pi_reader_close(reader);
    }
    if (a->base_ns == UINT64_MAX)
        a->base_ns = 0;
    const struct pi_analysis_observer *observer = options->observer;
    if (observer && observer->begin)
        observer->begin(observer->context, a);
    /* in parallel only where it can change nothing: more than one file, and no observer
     * that must see every event in order */
    unsigned jobs = options->jobs < count ? options->jobs : (unsigned)count;
    if (jobs < 2 || (observer && observer->sequential) ||
        pi_parallel_pass(a, paths, count, jobs) != 0)
        one_by_one(a, paths, count);
    if (observer && observer->end)
        observer->end(observer->context, a);
    return pi_analysis_end(a);
}

int pi_analysis_end(struct pi_analysis *a)
{
    pi_lineage_free(a->lineage); /* every name was looked up during the pass */
    a->lineage = NULL;
    pi_python_sites_sort(a);
    pi_host_memory_finish(a);
    pi_ranks_finish(a);
    pi_job_stop_find(a);
    if (a->options.progress && a->bytes_total >= (64u << 20))
        fprintf(stderr, "\n");
    return a->bad_input ? -1 : 0;
}

void pi_analysis_free(struct pi_analysis *a)
{
    for (size_t i = 0; i < a->process_count; i++) {
        struct pi_process_info *p = &a->processes[i];
        free(p->path);
        free(p->command);
        free(p->host);
        free(p->cgroup);
        free(p->stderr_tail);
        pi_series_free(&p->rss);
        pi_series_free(&p->pss);
        for (int k = 0; k < p->sender_count; k++)
            free(p->senders[k].command);
        free(p->inherited_unresolved);
        pi_working_span_free(p);
        pi_call_site_free(p->fatal.site);
        for (size_t b = 0; b < p->blocked_count; b++)
            pi_call_site_free(p->blocked[b].site);
        free(p->blocked);
        free(p->reaped);
        free(p->identity);
        for (size_t t = 0; t < p->thread_count; t++)
            pi_thread_timeline_free(p->threads[t].timeline);
        free(p->threads);
        pi_steps_free(&p->steps);
        pi_steps_free(&p->nvtx_steps);
        pi_relay_free(p);
        pi_span_steps_free(p);
        pi_spans_free(p);
        pi_requests_free(p);
        pi_evaluation_loops_free(p);
        pi_python_lines_free(p);
        pi_native_time_free(p);
        pi_phases_free(p);
        pi_gpu_free_process(p);
    }
    free(a->processes);
    pi_latency_table_free(&a->calls);
    pi_latency_table_free(&a->files);
    pi_python_sites_free(a);
    pi_python_time_free(a);
    pi_ranks_free(a);
    for (int w = 0; w < 3; w++)
        free(a->by_string_id[w]);
    memset(a, 0, sizeof(*a));
}
