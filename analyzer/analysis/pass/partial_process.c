/* partial_process.c - a process record written to or read from a partial file (see partial_process.h). */
#include "partial_process.h"

#include "analysis/pass/partial_parts.h"
#include "analysis/pass/partial_values.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/host/steps.h"
#include "analysis/host/thread_timeline.h"
#include "analysis/sites/call_sites.h"





/* @with_site: the fatal signal's frames; the stop signal has none (model.h) */
static void fatal_signal(struct pi_codec *c, struct pi_fatal_signal *f, int with_site)
{
    pi_codec_int(c, &f->seen);
    pi_codec_u32(c, &f->tid);
    pi_codec_u32(c, &f->signo);
    pi_codec_i32(c, &f->code);
    pi_codec_uint(c, &f->flags);
    pi_codec_u64(c, &f->detail);
    if (with_site)
        pi_partial_call_site(c, &f->site);
    pi_codec_u64(c, &f->ns);
}

static void header(struct pi_codec *c, struct pi_file_header *h)
{
    for (int i = 0; i < PI_FILE_MAGIC_LEN; i++) { /* bytes, not a string: no NUL is due */
        uint32_t byte = (unsigned char)h->magic[i];
        pi_codec_u32(c, &byte);
        h->magic[i] = (char)byte;
    }
    uint32_t v = h->version, size = h->header_size, record = h->record_size,
             clock = h->clock_source;
    pi_codec_u32(c, &v);
    pi_codec_u32(c, &size);
    pi_codec_u32(c, &h->endian);
    pi_codec_u32(c, &h->features);
    pi_codec_u32(c, &record);
    pi_codec_u32(c, &clock);
    h->version = (uint16_t)v;
    h->header_size = (uint16_t)size;
    h->record_size = (uint16_t)record;
    h->clock_source = (uint16_t)clock;
    pi_codec_i32(c, &h->pid);
    pi_codec_i32(c, &h->ppid);
    pi_codec_i32(c, &h->outer_pid);
    pi_codec_u64(c, &h->pid_ns);
    pi_codec_u64(c, &h->mnt_ns);
    pi_codec_u64(c, &h->start_realtime_ns);
    pi_codec_u64(c, &h->start_monotonic_ns);
    pi_codec_u64(c, &h->start_ticks);
    pi_codec_double(c, &h->ticks_per_second);
    pi_codec_u64(c, &h->flush_interval_ns);
    pi_codec_u64(c, &h->sample_interval_ns);
    for (int i = 0; i < PI_HDR_STRING_COUNT; i++) {
        uint32_t length = h->string_len[i];
        pi_codec_u32(c, &length);
        h->string_len[i] = (uint16_t)length;
    }
}


static void thread_timeline(struct pi_codec *c, struct pi_thread_timeline **timeline)
{
    if (!PRESENT(c, *timeline))
        return;
    struct pi_thread_timeline *t = *timeline;
    pi_codec_u64(c, &t->start_ns);
    pi_codec_u64(c, &t->bucket_ns);
    for (int b = 0; b < PI_TIMELINE_BUCKETS; b++)
        pi_codec_u32s(c, t->waited_us[b], PI_TIME_CPU);
    if (PRESENT(c, t->cpu)) {
        pi_codec_u32s(c, t->cpu->cpu_us, PI_TIMELINE_BUCKETS);
        pi_codec_u32s(c, t->cpu->measured_us, PI_TIMELINE_BUCKETS);
    }
}

static void thread(struct pi_codec *c, struct pi_thread_info *t)
{
    pi_codec_u32(c, &t->tid);
    pi_codec_chars(c, t->name, sizeof(t->name));
    pi_codec_u64(c, &t->first_ns);
    pi_codec_u64(c, &t->last_ns);
    U64S(c, t->time);
    pi_codec_u64(c, &t->cpu.spans_ns);
    pi_codec_u64(c, &t->cpu.open_ns);
    pi_codec_u64(c, &t->cpu.end_ns);
    pi_codec_u64(c, &t->cpu.end_open_ns);
    pi_codec_int(c, &t->cpu.ended);
    pi_codec_int(c, &t->cpu.measured);
    pi_codec_u64(c, &t->events);
    thread_timeline(c, &t->timeline);
}

static void step_point(struct pi_codec *c, struct pi_step_point *p)
{
    pi_codec_u64(c, &p->ns);
    pi_codec_u64(c, &p->wait_ns);
    pi_codec_u64(c, &p->sync_ns);
}

/* A thread's steps, finished: the detection state that lives while the file is read
 * (pending parts, posts, early micro-batches) is freed by then and not kept. */
static void steps(struct pi_codec *c, struct pi_steps *s)
{
    pi_codec_u64(c, &s->count);
    pi_codec_u64(c, &s->warmup);
    pi_partial_histogram(c, &s->steady_ns);
    pi_partial_histogram(c, &s->warmup_ns);
    pi_codec_u64(c, &s->steady_total_ns);
    pi_codec_u64(c, &s->steady_wait_ns);
    pi_codec_u64(c, &s->steady_sync_ns);
    pi_codec_u64(c, &s->steady_gpu_ns);
    pi_codec_u64(c, &s->steady_receive_ns);
    pi_codec_u64(c, &s->steady_cpu_ns);
    pi_codec_int(c, &s->steady_cpu_measured);
    pi_codec_u64(c, &s->warmup_total_ns);
    pi_codec_u64(c, &s->warmup_wait_ns);
    pi_codec_u64(c, &s->evaluation_steps);
    pi_codec_u64(c, &s->evaluation_steps_ns);
    pi_codec_u64(c, &s->wait_total_ns);
    pi_codec_u64(c, &s->sync_total_ns);
    step_point(c, &s->span_start);
    step_point(c, &s->receipt_end);
    step_point(c, &s->cluster_start);
    step_point(c, &s->quiet);
    pi_codec_int(c, &s->in_receive);
    pi_codec_u64(c, &s->receive_messages);
    pi_codec_u64(c, &s->message_end_ns);
    COUNT_OF(c, s->cluster_message_count, 16);
    for (unsigned i = 0; i < s->cluster_message_count; i++)
        step_point(c, &s->cluster_messages[i]);
    pi_codec_int(c, &s->boundary_pending);
    step_point(c, &s->pending_end);
    step_point(c, &s->pending_cluster_start);
    pi_codec_int(c, &s->after_header);
    pi_codec_int(c, &s->ready_polled);
    pi_codec_u64(c, &s->largest_payload);
    pi_codec_u64(c, &s->batches_held);
    pi_codec_u64(c, &s->batches_carried_in);
    pi_codec_int(c, &s->wakes_overflowed);
    pi_codec_u64(c, &s->spans);
    pi_codec_u64(c, &s->spans_one_post_a_batch);
    pi_codec_u64(c, &s->agreement_carry);
    pi_codec_int(c, &s->agreement_open);
    pi_codec_u64(c, &s->micro_batches);
    pi_codec_double(c, &s->micro_batches_p50);
    pi_partial_histogram(c, &s->micro_batch_ns);
    pi_partial_histogram(c, &s->after_micro_batches_ns);
    pi_codec_u64(c, &s->micro_batches_total_ns);
    pi_codec_u64(c, &s->split_steps_total_ns);
    pi_codec_u64(c, &s->warmup_most);
    /* every step's record (steps.c), PI_STEP_RECORD_WORDS numbers each; none once a rank's
     * per-step figures were let go */
    size_t records = s->steps ? (size_t)s->count : 0;
    pi_codec_count(c, &records, (size_t)s->count, PI_STEP_RECORD_WORDS);
    if (c->reading && records && records != s->count) /* the reports read one a step */
        pi_codec_fail(c, "steps without their records");
    if (c->reading && records &&
        !(s->steps = calloc(records, PI_STEP_RECORD_WORDS * sizeof(uint64_t))))
        pi_codec_fail(c, "out of memory");
    if (s->steps)
        pi_codec_u64s(c, s->steps, records * PI_STEP_RECORD_WORDS);
    if (c->reading)
        s->capacity = s->steps ? records : 0;
}














/* The process's own scalars and fixed arrays, before its parts. */
static void process_figures(struct pi_codec *c, struct pi_process_info *p)
{
    pi_codec_str(c, &p->path);
    header(c, &p->header);
    pi_codec_str(c, &p->command);
    pi_codec_str(c, &p->host);
    pi_codec_str(c, &p->cgroup);
    pi_codec_str(c, &p->identity);
    pi_codec_long(c, &p->rank);
    pi_codec_i64(c, &p->clock_offset_min);
    pi_codec_i64(c, &p->clock_offset_max);
    pi_codec_u64(c, &p->clock_syncs);
    pi_codec_u64(c, &p->clock_read_ns);
    pi_codec_u64(c, &p->start_ns);
    pi_codec_u64(c, &p->end_ns);
    pi_codec_u64(c, &p->records);
    pi_codec_u64(c, &p->lost);
    pi_codec_u64(c, &p->strings_lost);
    pi_codec_str(c, &p->inherited_unresolved);
    pi_codec_int(c, &p->ended);
    pi_codec_i64(c, &p->end_status);
    pi_codec_u64(c, &p->end_reason);
    pi_codec_int(c, &p->replaced_by_exec);
    pi_codec_str(c, &p->stderr_tail);
    fatal_signal(c, &p->fatal, 1);
    fatal_signal(c, &p->stop, 0);
    pi_codec_int(c, &p->stopped);
    COUNT_OF(c, p->sender_count, 4);
    for (int i = 0; i < p->sender_count; i++) {
        pi_codec_u32(c, &p->senders[i].pid);
        pi_codec_str(c, &p->senders[i].command);
    }
    for (size_t i = 0, n = ARRAY(c, p->blocked, p->blocked_count); i < n; i++) {
        struct pi_blocked_thread *b = &p->blocked[i];
        pi_codec_u32(c, &b->tid);
        pi_codec_u32(c, &b->what);
        pi_codec_u64(c, &b->object);
        pi_codec_u64(c, &b->since_ns);
        pi_codec_u64(c, &b->for_ns);
        pi_partial_call_site(c, &b->site);
    }
    pi_codec_u64(c, &p->stderr_bytes);
    pi_codec_u64(c, &p->children);
    for (size_t i = 0, n = ARRAY(c, p->reaped, p->reaped_count); i < n; i++) {
        pi_codec_u32(c, &p->reaped[i].pid);
        pi_codec_u32(c, &p->reaped[i].status);
        pi_codec_u64(c, &p->reaped[i].ns);
    }
    if (c->reading)
        p->reaped_capacity = p->reaped_count;
    pi_codec_int(c, &p->truncated);
    pi_codec_u64(c, &p->damaged_bytes);
    pi_codec_u64(c, &p->damaged_frames);
    pi_codec_u64(c, &p->cpu_user_ns);
    pi_codec_u64(c, &p->cpu_sys_ns);
    pi_codec_u64(c, &p->profiler_cpu_ns);
    pi_codec_u64(c, &p->rss_peak);
    pi_codec_u64(c, &p->rss_peak_ns);
    pi_codec_u64(c, &p->rss_last);
    pi_partial_series(c, &p->rss);
    pi_codec_u32(c, &p->oom.readings);
    COUNT_OF(c, p->oom.rise_count, 4); /* of rises[] */
    pi_codec_u64(c, &p->oom.first);
    pi_codec_u64(c, &p->oom.last);
    for (int i = 0; i < 4; i++) {
        pi_codec_u64(c, &p->oom.rises[i].ns);
        pi_codec_u64(c, &p->oom.rises[i].kills);
        pi_codec_u64(c, &p->oom.rises[i].limit_bytes);
        pi_codec_u64(c, &p->oom.rises[i].usage_bytes);
    }
    pi_codec_u64(c, &p->pss_peak);
    pi_codec_u64(c, &p->pss_peak_ns);
    pi_partial_series(c, &p->pss);
    pi_codec_u64(c, &p->main_still_ns);
}

static void working_span(struct pi_codec *c, struct pi_working_span *w)
{
    pi_codec_u64(c, &w->start_ns);
    pi_codec_u64(c, &w->end_ns);
    U64S(c, w->waited_at_start);
    U64S(c, w->waited_at_end);
    pi_codec_u64(c, &w->cpu_ns);
    pi_codec_int(c, &w->cpu_measured);
    pi_codec_i64(c, &w->ready_fd);
    U64S(c, w->summarised);
    for (size_t i = 0, n = ARRAY(c, w->pieces, w->piece_count); i < n; i++) {
        pi_codec_u64(c, &w->pieces[i].start_ns);
        pi_codec_u64(c, &w->pieces[i].end_ns);
        pi_codec_u64(c, &w->pieces[i].ns);
        pi_codec_uint(c, &w->pieces[i].time_class);
    }
    if (c->reading)
        w->piece_capacity = w->piece_count;
}

static void windows(struct pi_codec *c, struct pi_process_info *p)
{
    pi_codec_count(c, &p->window_count, PI_MAX_WINDOWS, 1);
    for (size_t i = 0; i < p->window_count; i++) {
        pi_codec_u64(c, &p->windows[i].start_ns);
        pi_codec_u64(c, &p->windows[i].end_ns);
    }
    struct pi_summary_info *s = &p->summary;
    pi_codec_u64(c, &s->summaries);
    pi_codec_u64(c, &s->summarised);
    pi_codec_u64(c, &s->replayed);
    pi_codec_int(c, &s->replaying);
    pi_codec_count(c, &s->window_count, PI_MAX_WINDOWS, 1);
    for (size_t i = 0; i < s->window_count; i++) {
        pi_codec_u64(c, &s->windows[i].start_ns);
        pi_codec_u64(c, &s->windows[i].end_ns);
        pi_codec_uint(c, &s->windows[i].reason);
        pi_codec_u64(c, &s->windows[i].step_ns);
    }
    pi_codec_int(c, &p->window_open);
    pi_codec_int(c, &p->thread_cpu_edges);
    pi_codec_u64(c, &p->window_ns);
}

static void growth(struct pi_codec *c, struct pi_memory_growth *g)
{
    pi_codec_int(c, &g->by_steps);
    pi_codec_u64(c, &g->steady_steps);
    pi_codec_double(c, &g->device_bytes_per_step);
    pi_codec_double(c, &g->rss_bytes_per_step);
    pi_codec_u64(c, &g->device_start_step);
    pi_codec_u64(c, &g->rss_start_step);
    pi_codec_u64(c, &g->device_growing_steps);
    pi_codec_u64(c, &g->rss_growing_steps);
    pi_codec_double(c, &g->device_bytes_per_s);
    pi_codec_double(c, &g->rss_bytes_per_s);
}

void pi_partial_process(struct pi_codec *c, struct pi_process_info *p)
{
    process_figures(c, p);
    working_span(c, &p->working);
    pi_codec_u64(c, &p->run_delay_first.ns);
    pi_codec_u64(c, &p->run_delay_first.delay_ns);
    pi_codec_u64(c, &p->run_delay_last.ns);
    pi_codec_u64(c, &p->run_delay_last.delay_ns);
    pi_codec_u64(c, &p->run_delay_samples);
    for (size_t i = 0, n = ARRAY(c, p->threads, p->thread_count); i < n; i++)
        thread(c, &p->threads[i]);
    pi_codec_size(c, &p->last_thread);
    if (c->reading) {
        p->thread_capacity = p->thread_count;
        if (p->last_thread >= p->thread_count)
            p->last_thread = 0;
    }
    steps(c, &p->steps);
    steps(c, &p->nvtx_steps);
    pi_codec_u64(c, &p->nvtx_wait_ns);
    pi_codec_u64(c, &p->nvtx_sync_ns);
    pi_codec_interned(c, &p->steps_from);
    pi_codec_u32(c, &p->steps_tid);
    pi_codec_u64(c, &p->gpu_busy_ns);
    pi_partial_gpu_memory(c, &p->gpu);
    pi_partial_spans(c, &p->spans);
    pi_partial_evaluation_loops(c, &p->evaluation_loops);
    pi_partial_requests(c, &p->requests);
    growth(c, &p->growth);
    windows(c, p);
    pi_codec_u32(c, &p->relay_tid);
    pi_codec_int(c, &p->python);
    pi_partial_gpu_timeline(c, &p->gpu_timeline);
    pi_partial_collectives(c, &p->collectives);
    pi_partial_gemm(c, &p->gemm);
    pi_codec_count(c, &p->device_count, PI_MAX_DEVICES, 1);
    for (size_t i = 0; i < p->device_count; i++) {
        struct pi_device_info *d = &p->devices[i];
        pi_codec_uint(c, &d->ordinal);
        pi_codec_uint(c, &d->major);
        pi_codec_uint(c, &d->minor);
        pi_codec_uint(c, &d->sms);
        pi_codec_uint(c, &d->clock_khz);
        pi_codec_chars(c, d->name, sizeof(d->name));
    }
    pi_partial_python_lines(c, &p->python_lines);
    pi_partial_phases(c, &p->phases);
    pi_partial_native_time(c, &p->native_time);
}
