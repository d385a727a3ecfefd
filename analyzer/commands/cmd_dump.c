/*
 * cmd_dump.c - `profinject-analyze dump FILE...`: every record as a line
 * of text, header first. For looking at what the recorder wrote.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analysis/gpu/collectives.h"
#include "analysis/host/spans.h"
#include "analysis/sites/call_sites.h"
#include "commands.h"
#include "reader/lineage.h"
#include "reader/summary_record.h"
#include "reports/format/terminal_text.h"

/* where the records go: stdout, with what a trace names shown safely */
static FILE *dump_out;

void pi_print_header(FILE *out, const struct pi_reader *reader)
{
    const struct pi_trace_info *info = pi_reader_info(reader);
    const struct pi_file_header *h = &info->header;
    char when[64] = "?";
    time_t seconds = (time_t)(h->start_realtime_ns / 1000000000u);
    struct tm tm;
    if (gmtime_r(&seconds, &tm))
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(out, "file: %s\n", pi_reader_path(reader));
    fprintf(out, "format: %u (header %u bytes, records %u bytes)\n", h->version, h->header_size,
            h->record_size);
    fprintf(out, "pid: %d  ppid: %d  outer pid: %d\n", h->pid, h->ppid, h->outer_pid);
    fprintf(out, "host: %s\n", info->strings[PI_HDR_HOSTNAME]);
    fprintf(out, "command: %s\n", info->strings[PI_HDR_CMDLINE]);
    fprintf(out, "executable: %s\n", info->strings[PI_HDR_EXE]);
    fprintf(out, "cgroup: %s\n", info->strings[PI_HDR_CGROUP]);
    fprintf(out, "namespaces: pid %" PRIu64 "  mnt %" PRIu64 "\n", h->pid_ns, h->mnt_ns);
    /* the launchers' variables, one "KEY=value" a line, shown on one line */
    fprintf(out, "identity:");
    for (const char *c = info->strings[PI_HDR_IDENTITY]; *c; c++)
        fputc(*c == '\n' ? ' ' : *c, out);
    fputc('\n', out);
    if (info->inherited_below)
        fprintf(out, "inherited: ids below %u, from its parent's file %s\n", info->inherited_below,
                info->parent_file);
    fprintf(out, "started: %s (monotonic %" PRIu64 " ns)\n", when, h->start_monotonic_ns);
    fprintf(out, "clock: %s, %.6f ticks/ns\n",
            h->clock_source == PI_CLOCK_TSC ? "invariant TSC" : "CLOCK_MONOTONIC",
            h->ticks_per_second / 1e9);
    fprintf(out, "flush every %.1f ms, process sample every %.1f ms\n",
            (double)h->flush_interval_ns / 1e6, (double)h->sample_interval_ns / 1e6);
}

static const char *string_or(const struct pi_reader *reader, uint64_t id, const char *fallback)
{
    const char *s = id ? pi_reader_string(reader, id) : NULL;
    return s ? s : fallback;
}

/* A stack id as its text form (format 1: the text itself). */
static void print_stack(const struct pi_reader *reader, const char *label, uint64_t id)
{
    struct pi_call_site *site = id ? pi_call_site_read(reader, id) : NULL;
    fprintf(dump_out, " %s=\"%s\"", label, site ? site->text : "?");
    pi_call_site_free(site);
}

/* A summary: what it stands for, its figures and its buckets as index:count. */
static void print_summary(const struct pi_reader *reader)
{
    const struct pi_summary *s = pi_reader_summary(reader);
    const struct pi_summary_body *b = &s->body;
    fprintf(dump_out, " of=%s flags=0x%x key=%" PRIu64 ",%" PRIu64 ",%" PRIu64 " count=%" PRIu64
           " total_ns=%" PRIu64 " min_ns=%" PRIu64 " max_ns=%" PRIu64 " bytes=%" PRIu64 " buckets=",
           pi_record_kind_name(b->kind), b->flags, b->key[0], b->key[1], b->key[2], s->count,
           b->total_ns, b->min_ns, b->max_ns, b->bytes);
    for (uint32_t i = 0; i < b->bucket_count; i++)
        fprintf(dump_out, "%s%u:%" PRIu64, i ? "," : "", PI_SUMMARY_BUCKET_INDEX(s->buckets[i]),
               PI_SUMMARY_BUCKET_COUNT(s->buckets[i]));
}

static void print_module(const struct pi_reader *reader, uint64_t id)
{
    unsigned kind;
    uint32_t length;
    const unsigned char *bytes = pi_reader_definition(reader, id, &kind, &length);
    struct pi_module_def def;
    if (!bytes || length < sizeof(def)) {
        fprintf(dump_out, " id=%" PRIu64 " (damaged)", id);
        return;
    }
    memcpy(&def, bytes, sizeof(def));
    if (length < sizeof(def) + (size_t)def.build_id_length + def.path_length) {
        fprintf(dump_out, " id=%" PRIu64 " (damaged)", id);
        return;
    }
    fprintf(dump_out, " id=%" PRIu64 " base=0x%" PRIx64 " build_id=", id, def.load_base);
    for (unsigned i = 0; i < def.build_id_length; i++)
        fprintf(dump_out, "%02x", bytes[sizeof(def) + i]);
    fprintf(dump_out, " path=\"%.*s\"", (int)def.path_length,
           (const char *)bytes + sizeof(def) + def.build_id_length);
}

static int reduces(unsigned nccl_func)
{
    return nccl_func == PI_NCCL_ALL_REDUCE || nccl_func == PI_NCCL_REDUCE ||
           nccl_func == PI_NCCL_REDUCE_SCATTER;
}

static void print_record(const struct pi_reader *reader, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    const struct pi_file_header *h = &pi_reader_info(reader)->header;
    double since = ((double)ev->ts_ns - (double)h->start_monotonic_ns) / 1e9;
    if (pi_record_has_time(r->kind))
        fprintf(dump_out, "%" PRIu64 " %+.9f tid=%u %s", ev->index, since, r->tid, pi_record_kind_name(r->kind));
    else
        fprintf(dump_out, "%" PRIu64 " - tid=%u %s", ev->index, r->tid, pi_record_kind_name(r->kind));
    switch (r->kind) {
    case PI_REC_STRING:
        fprintf(dump_out, " id=%" PRIu64 " \"%s\"", r->arg[0], string_or(reader, r->arg[0], ""));
        break;
    case PI_REC_LOST:
        fprintf(dump_out, " count=%" PRIu64 " reason=%" PRIu64, r->arg[0], r->arg[1]);
        break;
    case PI_REC_CLOCK_SYNC:
        fprintf(dump_out, " monotonic_ns=%" PRIu64 " realtime_ns=%" PRIu64, r->arg[0], r->arg[1]);
        break;
    case PI_REC_PROC_SAMPLE:
        fprintf(dump_out, " rss_bytes=%" PRIu64 " user_ns=%" PRIu64 " sys_ns=%" PRIu64, r->arg[0],
                r->arg[1], r->arg[2]);
        break;
    case PI_REC_PROC_PSS:
        fprintf(dump_out, " pss_bytes=%" PRIu64 " rss_bytes=%" PRIu64 " read_cpu_ns=%" PRIu64,
                r->arg[0], r->arg[1], r->arg[2]);
        break;
    case PI_REC_STDERR_TAIL:
        fprintf(dump_out, " written_bytes=%" PRIu64 " kept_bytes=%" PRIu64, r->arg[1], r->arg[2]);
        fprintf(dump_out, " text=\"%s\"", string_or(reader, r->arg[0], ""));
        break;
    case PI_REC_DEVICE_MEMORY:
        fprintf(dump_out, " free_bytes=%" PRIu64 " total_bytes=%" PRIu64 " device=%" PRIu64,
                r->arg[0], r->arg[1], r->arg[2]);
        break;
    case PI_REC_FATAL_SIGNAL:
        fprintf(dump_out, " signal=%" PRIu32 " code=%" PRId32, (uint32_t)r->arg[0],
                (int32_t)(uint32_t)(r->arg[0] >> 32));
        if (r->flags & PI_SIGNAL_SENT)
            fprintf(dump_out, " sender_pid=%" PRIu32 " sender_uid=%" PRIu32, (uint32_t)r->arg[1],
                    (uint32_t)(r->arg[1] >> 32));
        else if (r->flags & PI_SIGNAL_FAULT)
            fprintf(dump_out, " address=0x%" PRIx64, r->arg[1]);
        if (r->flags & PI_SIGNAL_HANDLED)
            fprintf(dump_out, " handled_by_the_application");
        break;
    case PI_REC_MEMORY_CGROUP:
        fprintf(dump_out, " oom_kills=%" PRIu64 " limit_bytes=%" PRIu64 " usage_bytes=%" PRIu64,
                r->arg[0], r->arg[1], r->arg[2]);
        break;
    case PI_REC_FORK:
        fprintf(dump_out, " child=%" PRId64 " dur_ns=%" PRIu64, (int64_t)r->arg[0], ev->dur_ns);
        break;
    case PI_REC_EXEC:
        fprintf(dump_out, " path=\"%s\"", string_or(reader, r->arg[0], "?"));
        if (r->flags & PI_FLAG_FAILED)
            fprintf(dump_out, " failed errno=%" PRIu64, r->arg[1]);
        break;
    case PI_REC_PROCESS_END:
        fprintf(dump_out, " status=%" PRId64 " reason=%s", (int64_t)r->arg[0],
               r->arg[1] == PI_END_SIGNAL ? "signal"
               : r->arg[1] == PI_END__EXIT ? "_exit"
                                           : "exit");
        fprintf(dump_out, " profiler_cpu_ns=%" PRIu64, r->arg[2]);
        break;
    case PI_REC_MARK:
    case PI_REC_RANGE:
        if (r->kind == PI_REC_RANGE)
            fprintf(dump_out, " dur_ns=%" PRIu64, ev->dur_ns);
        fprintf(dump_out, " value=%" PRIu64 " name=\"%s\"", r->arg[0], string_or(reader, r->arg[1], ""));
        break;
    case PI_REC_IO:
        fprintf(dump_out, " %s fd=%" PRId64 " class=%s result=%" PRId64 " dur_ns=%" PRIu64,
               pi_io_op_name(PI_IO_OP(r->flags)), (int64_t)r->arg[0],
               pi_fd_class_name(PI_IO_CLASS(r->flags)), (int64_t)r->arg[1], ev->dur_ns);
        if (r->arg[2])
            fprintf(dump_out, " path=\"%s\"", string_or(reader, r->arg[2], "?"));
        break;
    case PI_REC_WAIT:
        fprintf(dump_out, " %s object=0x%" PRIx64 " result=%" PRId64 " dur_ns=%" PRIu64,
               pi_wait_kind_name((unsigned)r->arg[0]), r->arg[1], (int64_t)r->arg[2], ev->dur_ns);
        break;
    case PI_REC_GPU_ALLOC:
    case PI_REC_GPU_FREE:
        fprintf(dump_out, " %s %s ptr=0x%" PRIx64 " bytes=%" PRIu64 " stream=%u%s%s dur_ns=%" PRIu64,
               pi_cuda_api_name(PI_CUDA_API(r->flags)),
               pi_gpu_alloc_kind_name(PI_CUDA_SUBTYPE(r->flags)), r->arg[0], r->arg[1],
               PI_CUDA_STREAM(r->arg[2]), (r->flags & PI_CUDA_NESTED) ? " nested" : "",
               (r->flags & PI_FLAG_FAILED) ? " failed" : "", ev->dur_ns);
        if (PI_CUDA_STACK(r->arg[2]))
            print_stack(reader, "stack", PI_CUDA_STACK(r->arg[2]));
        break;
    case PI_REC_MODULE:
        print_module(reader, r->arg[0]);
        break;
    case PI_REC_STACK:
        fprintf(dump_out, " id=%" PRIu64, r->arg[0]);
        print_stack(reader, "frames", r->arg[0]);
        break;
    case PI_REC_CALL_SITE:
        fprintf(dump_out, " of=%s detail=%u key=%" PRIu64 "%s%s", pi_record_kind_name(PI_CALL_SITE_KIND(r->arg[1])),
               PI_CALL_SITE_DETAIL(r->arg[1]), r->arg[2],
               (r->flags & PI_CALL_SITE_DEFERRED) ? " at_safe_point" : "",
               (r->flags & PI_CALL_SITE_NATIVE) ? " native_only" : "");
        print_stack(reader, "stack", r->arg[0]);
        break;
    case PI_REC_WAKE:
        fprintf(dump_out, " object=0x%" PRIx64, r->arg[0]);
        break;
    case PI_REC_PY_SAMPLE:
        fprintf(dump_out, " dur_ns=%" PRIu64, ev->dur_ns);
        if (r->flags & PI_PY_SAMPLE_CPU)
            fprintf(dump_out, " cpu_ns=%" PRIu64, r->arg[2]);
        print_stack(reader, "stack", r->arg[0]);
        break;
    case PI_REC_NATIVE_SAMPLE:
        fprintf(dump_out, " thread=%" PRIu64 " cpu_ns=%" PRIu64, r->arg[0], ev->dur_ns);
        print_stack(reader, "stack", r->arg[1]);
        break;
    case PI_REC_PYTHON:
        fprintf(dump_out, " version=%u.%u.%u frames=%" PRIu64 " reason=\"%s\"", (unsigned)(r->arg[0] >> 24),
               (unsigned)(r->arg[0] >> 16) & 0xff, (unsigned)(r->arg[0] >> 8) & 0xff, r->arg[1],
               string_or(reader, r->arg[2], ""));
        break;
    case PI_REC_GPU_LAUNCH:
        fprintf(dump_out, " %s correlation=%" PRIu64 " kernel=\"%s\" stream=%u%s dur_ns=%" PRIu64,
               pi_cuda_api_name(PI_CUDA_API(r->flags)), r->arg[0], string_or(reader, r->arg[1], "?"),
               PI_CUDA_STREAM(r->arg[2]), (r->flags & PI_CUDA_NESTED) ? " nested" : "", ev->dur_ns);
        break;
    case PI_REC_GPU_COPY:
        fprintf(dump_out, " %s %s%s bytes=%" PRIu64 " correlation=%" PRIu64 " stream=%u%s dur_ns=%" PRIu64,
               pi_cuda_api_name(PI_CUDA_API(r->flags)),
               pi_gpu_copy_kind_name(PI_CUDA_SUBTYPE(r->flags)),
               (r->flags & PI_CUDA_PINNED) ? " pinned" : "", r->arg[0], r->arg[1],
               PI_CUDA_STREAM(r->arg[2]), (r->flags & PI_CUDA_NESTED) ? " nested" : "", ev->dur_ns);
        break;
    case PI_REC_GPU_SYNC:
        fprintf(dump_out, " %s kind=%u%s dur_ns=%" PRIu64, pi_cuda_api_name(PI_CUDA_API(r->flags)),
               PI_CUDA_SUBTYPE(r->flags), (r->flags & PI_CUDA_NESTED) ? " nested" : "", ev->dur_ns);
        break;
    case PI_REC_GPU_TIME:
        fprintf(dump_out, " correlation=%" PRIu64 " gpu_ns=%" PRIu64 " source=%" PRIu64, r->arg[0],
               ev->dur_ns, r->arg[1]);
        if (r->arg[2])
            fprintf(dump_out, " kernel=\"%s\"", string_or(reader, r->arg[2], "?"));
        if (r->flags & PI_GPU_TIME_PART)
            fprintf(dump_out, " part");
        break;
    case PI_REC_GPU_POOL:
        fprintf(dump_out, " pool=0x%" PRIx64 " device=%u reserved=%" PRIu64 " reserved_high=%" PRIu64,
               r->arg[0], (unsigned)r->flags, r->arg[1], r->arg[2]);
        break;
    case PI_REC_GPU_TIMING:
        fprintf(dump_out, " source=%" PRIu64 " code=%" PRId64 " reason=\"%s\"", r->arg[0], (int64_t)r->arg[1],
               string_or(reader, r->arg[2], ""));
        break;
    case PI_REC_NVTX_RANGE:
        fprintf(dump_out, " dur_ns=%" PRIu64 " name=\"%s\" depth=%" PRIu64, ev->dur_ns,
               string_or(reader, r->arg[0], "?"), r->arg[1]);
        break;
    case PI_REC_THREAD_START:
        fprintf(dump_out, " creator=%" PRIu64, r->arg[0]);
        break;
    case PI_REC_NCCL_COMM:
        fprintf(dump_out, " %s%s comm=0x%" PRIx64 " hash=%016" PRIx64 " rank=%d nranks=%d dur_ns=%" PRIu64,
               pi_nccl_comm_op_name(PI_NCCL_COMM_OP(r->flags)),
               (r->flags & PI_FLAG_FAILED) ? " failed" : "", r->arg[0], r->arg[1],
               PI_NCCL_RANK(r->arg[2]), PI_NCCL_NRANKS(r->arg[2]), ev->dur_ns);
        break;
    case PI_REC_COLLECTIVE:
        fprintf(dump_out, " %s%s%s count=%" PRIu64 " datatype=%s comm=0x%" PRIx64 " stream=%u redop=%s"
               " peer=%d dur_ns=%" PRIu64,
               pi_nccl_func_name(PI_NCCL_FUNC(r->flags)),
               (r->flags & PI_FLAG_FAILED) ? " failed" : "",
               (r->flags & PI_NCCL_GROUPED) ? " grouped" : "", r->arg[0],
               pi_nccl_datatype_name(PI_NCCL_DATATYPE(r->flags)), r->arg[1],
               PI_NCCL_STREAM(r->arg[2]),
               reduces(PI_NCCL_FUNC(r->flags)) ? pi_nccl_redop_name(PI_NCCL_REDOP(r->arg[2])) : "-",
               PI_NCCL_PEER(r->arg[2]), ev->dur_ns);
        break;
    case PI_REC_GEMM:
        fprintf(dump_out, " api=%u%s%s%s m=%" PRIu32 " n=%" PRIu32 " k=%" PRIu32 " batch=%" PRIu32
                          " a_type=%u d_type=%u compute=%u dur_ns=%" PRIu64,
                PI_GEMM_API(r->flags), (r->flags & PI_FLAG_FAILED) ? " failed" : "",
                (r->flags & PI_GEMM_TRANS_A) ? " trans_a" : "",
                (r->flags & PI_GEMM_TRANS_B) ? " trans_b" : "", PI_GEMM_LOW(r->arg[0]),
                PI_GEMM_HIGH(r->arg[0]), PI_GEMM_LOW(r->arg[1]), PI_GEMM_HIGH(r->arg[1]),
                PI_GEMM_A_TYPE(r->arg[2]), PI_GEMM_D_TYPE(r->arg[2]), PI_GEMM_COMPUTE(r->arg[2]),
                ev->dur_ns);
        break;
    case PI_REC_SIGNAL_SENDER:
        fprintf(dump_out, " pid=%" PRIu64 " signal=%" PRIu64 " command=\"%s\"", r->arg[0],
                r->arg[2], string_or(reader, r->arg[1], ""));
        break;
    case PI_REC_WAIT_IN_FLIGHT: {
        uint32_t what = PI_IN_FLIGHT_WHAT(r->arg[0]);
        fprintf(dump_out, " blocked_tid=%" PRIu32, PI_IN_FLIGHT_TID(r->arg[0]));
        if (what & PI_IN_FLIGHT_IO)
            fprintf(dump_out, " io %s fd=%" PRId64 " class=%s",
                    pi_io_op_name(PI_IO_OP(PI_IN_FLIGHT_IO_FLAGS(what))), (int64_t)r->arg[1],
                    pi_fd_class_name(PI_IO_CLASS(PI_IN_FLIGHT_IO_FLAGS(what))));
        else if (what & PI_IN_FLIGHT_GPU)
            fprintf(dump_out, " gpu %s handle=0x%" PRIx64,
                    pi_cuda_api_name(PI_CUDA_API(PI_IN_FLIGHT_GPU_FLAGS(what))), r->arg[1]);
        else
            fprintf(dump_out, " %s object=0x%" PRIx64, pi_wait_kind_name(what), r->arg[1]);
        fprintf(dump_out, " dur_ns=%" PRIu64, ev->dur_ns);
        if (r->arg[2])
            print_stack(reader, "stack", (uint32_t)r->arg[2]);
        break;
    }
    case PI_REC_SPAN:
        fprintf(dump_out, " %s name=\"%s\" depth=%u%s cpu_ns=%" PRIu64 " device_bytes=%" PRId64
                          " dur_ns=%" PRIu64,
                pi_span_kind_name(PI_SPAN_KIND(r->arg[0])),
                string_or(reader, PI_SPAN_NAME(r->arg[0]), "?"), PI_SPAN_DEPTH(r->arg[0]),
                (r->arg[0] & PI_SPAN_RAISED) ? " raised" : "", r->arg[1], (int64_t)r->arg[2],
                ev->dur_ns);
        break;
    case PI_REC_SPAN_HOST_MEMORY:
        fprintf(dump_out, " %s name=\"%s\" resident_change=%" PRId64 " resident=%" PRIu64,
                pi_span_kind_name(PI_SPAN_KIND(r->arg[0])),
                string_or(reader, PI_SPAN_NAME(r->arg[0]), "?"), (int64_t)r->arg[1], r->arg[2]);
        break;
    case PI_REC_SPAN_NOTE:
        fprintf(dump_out, " %s name=\"%s\" note=\"%s\"", pi_span_kind_name(PI_SPAN_KIND(r->arg[0])),
                string_or(reader, PI_SPAN_NAME(r->arg[0]), "?"),
                string_or(reader, (uint32_t)r->arg[1], "?"));
        break;
    case PI_REC_DEVICE:
        fprintf(dump_out, " ordinal=%" PRIu32 " cc=%u.%u sms=%" PRIu32 " clock_khz=%" PRIu32
                          " name=\"%s\"",
                PI_DEVICE_ORDINAL(r->arg[0]), PI_DEVICE_MAJOR(r->arg[0]),
                PI_DEVICE_MINOR(r->arg[0]), PI_DEVICE_SMS(r->arg[1]),
                PI_DEVICE_CLOCK_KHZ(r->arg[1]), string_or(reader, r->arg[2], "?"));
        break;
    case PI_REC_THREAD_NAME:
        fprintf(dump_out, " name=\"%s\"", string_or(reader, r->arg[0], "?"));
        break;
    case PI_REC_SUMMARY:
        print_summary(reader);
        break;
    case PI_REC_THREAD_CPU:
        fprintf(dump_out, " %s thread=%" PRIu32 " cpu_ns=%" PRIu64,
               r->arg[1] == PI_THREAD_CPU_OPENING   ? "opening"
               : r->arg[1] == PI_THREAD_CPU_SAMPLE ? "sample"
                                                    : "closing",
               (uint32_t)r->arg[2], r->arg[0]);
        if (r->flags & PI_FLAG_RUN_DELAY)
            fprintf(dump_out, " run_delay_ms=%" PRIu64, r->arg[2] >> 32);
        break;
    case PI_REC_DETAIL:
        fprintf(dump_out, " %s reason=%" PRIu64 " step_ns=%" PRIu64 " dur_ns=%" PRIu64,
               r->arg[0] == PI_DETAIL_REPLAY_BEGIN ? "replay_begin"
               : r->arg[0] == PI_DETAIL_REPLAY_END ? "replay_end"
                                                   : "window",
               r->arg[1], r->arg[2], ev->dur_ns);
        break;
    default:
        fprintf(dump_out, " flags=0x%x dur_ns=%" PRIu64 " args=%" PRIu64 ",%" PRIu64 ",%" PRIu64, r->flags,
               ev->dur_ns, r->arg[0], r->arg[1], r->arg[2]);
        break;
    }
    fputc('\n', dump_out);
}

int pi_cmd_dump(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "usage: profinject-analyze dump FILE...\n");
        return PI_EXIT_USAGE;
    }
    int status = PI_EXIT_OK;
    dump_out = pi_terminal_stream(stdout);
    struct pi_lineage *lineage = pi_lineage_new(argv, (size_t)argc);
    for (int i = 0; i < argc && !ferror(dump_out); i++) {
        char error[600];
        struct pi_reader *reader = pi_reader_open(argv[i], error, sizeof(error));
        if (!reader) {
            fprintf(stderr, "profinject-analyze: %s\n", error);
            status = PI_EXIT_BAD_INPUT;
            continue;
        }
        if (lineage && pi_lineage_attach(lineage, reader, error, sizeof(error)) != 0)
            fprintf(stderr,
                    "profinject-analyze: %s: warning: its inherited names, paths and stacks "
                    "are unresolved: %s\n",
                    argv[i], error);
        pi_print_header(dump_out, reader);
        struct pi_event ev;
        int got = PI_READ_END;
        while (!ferror(dump_out) && (got = pi_reader_next(reader, &ev)) == PI_READ_EVENT)
            print_record(reader, &ev);
        if (got == PI_READ_ERROR) {
            fprintf(stderr, "profinject-analyze: %s\n", pi_reader_error(reader));
            status = PI_EXIT_BAD_INPUT;
        }
        pi_reader_warn_truncated(stderr, reader);
        pi_reader_close(reader);
    }
    pi_lineage_free(lineage);
    return pi_finish_stdout(dump_out) == 0 ? status : PI_EXIT_BAD_INPUT;
}
