/*
 * chrome_trace.c - Trace Event Format for Perfetto UI and chrome://tracing,
 * streamed while the analysis reads the files (an observer of its pass): processes and threads
 * named (M events), calls and the calls of marked Python functions (spans) as complete
 * slices (X), process events as instants (i), RSS as a counter (C). Timestamps are
 * microseconds with three decimals (nanosecond precision) from the earliest process start.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/gpu/collectives.h"
#include "analysis/gpu/gemm.h"
#include "analysis/gpu/gpu_analysis.h"
#include "analysis/host/spans.h"
#include "analysis/sites/demangle.h"
#include "report.h"
#include "reports/format/json_text.h"

/* GPU work goes on a track of its own in each process. */
#define GPU_TRACK_TID 999999999u

static void separator(struct pi_chrome_trace *c)
{
    if (!c->first)
        fputs(",\n", c->out);
    c->first = 0;
}

static double micros(const struct pi_chrome_trace *c, uint64_t ns)
{
    uint64_t base = c->analysis->base_ns;
    return ns >= base ? (double)(ns - base) / 1e3 : -(double)(base - ns) / 1e3;
}

static void begin(struct pi_chrome_trace *c)
{
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"profinject-analyze\"},"
          "\"traceEvents\":[\n",
          c->out);
}

static void end(struct pi_chrome_trace *c)
{
    fputs("\n]}\n", c->out);
}

static void metadata(struct pi_chrome_trace *c, int pid, uint32_t tid, const char *what,
                     const char *name)
{
    FILE *out = c->out;
    separator(c);
    fprintf(out, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":", pid,
            tid, what);
    pi_json_string(out, name);
    fputs("}}", out);
}

static void process(struct pi_chrome_trace *c, const struct pi_process_info *p)
{
    char name[300];
    snprintf(name, sizeof(name), "%.200s (pid %d)", p->command, p->header.pid);
    metadata(c, p->header.pid, (uint32_t)p->header.pid, "process_name", name);
}

/* Device memory as a counter, at each change the analysis has put in time order. */
static void device_memory(struct pi_chrome_trace *c, const struct pi_process_info *p)
{
    size_t count = 0;
    const struct pi_memory_change *changes = p->gpu ? pi_gpu_take_changes(p->gpu, &count) : NULL;
    for (size_t i = 0; i < count; i++) {
        separator(c);
        fprintf(c->out,
                "{\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,\"name\":\"device memory\","
                "\"args\":{\"MB\":%.3f}}",
                p->header.pid, micros(c, changes[i].ts_ns), (double)changes[i].live / 1e6);
    }
}

static void thread_names(struct pi_chrome_trace *c, const struct pi_process_info *p)
{
    device_memory(c, p); /* the last changes, applied when the file ended */
    if (p->gpu)
        metadata(c, p->header.pid, GPU_TRACK_TID, "thread_name", "GPU");
    for (size_t i = 0; i < p->thread_count; i++) {
        const struct pi_thread_info *t = &p->threads[i];
        char name[100];
        if (t->name[0])
            snprintf(name, sizeof(name), "%s (%u)", t->name, t->tid);
        else
            snprintf(name, sizeof(name), "%s %u",
                     (int)t->tid == p->header.pid ? "main thread" : "thread", t->tid);
        metadata(c, p->header.pid, t->tid, "thread_name", name);
    }
}

static void slice(struct pi_chrome_trace *c, const struct pi_process_info *p, const struct pi_event *ev,
                  const char *name, const char *category)
{
    FILE *out = c->out;
    separator(c);
    fprintf(out, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\","
                 "\"name\":",
            p->header.pid, ev->rec.tid, micros(c, ev->ts_ns), (double)ev->dur_ns / 1e3, category);
    pi_json_string(out, name);
}

static void instant(struct pi_chrome_trace *c, const struct pi_process_info *p,
                    const struct pi_event *ev, const char *name)
{
    FILE *out = c->out;
    separator(c);
    fprintf(out, "{\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"name\":",
            p->header.pid, ev->rec.tid ? ev->rec.tid : (uint32_t)p->header.pid,
            micros(c, ev->ts_ns));
    pi_json_string(out, name);
}

/* A flow arrow end from a launch (ph "s") to its GPU work (ph "f"). */
static void flow(struct pi_chrome_trace *c, const struct pi_process_info *p, uint32_t tid, uint64_t ns,
                 uint64_t correlation, int start)
{
    separator(c);
    fprintf(c->out,
            "{\"ph\":\"%s\",%s\"cat\":\"gpu\",\"name\":\"launch\",\"id\":%" PRIu64
            ",\"pid\":%d,\"tid\":%u,\"ts\":%.3f}",
            start ? "s" : "f", start ? "" : "\"bp\":\"e\",",
            ((uint64_t)(uint32_t)p->header.pid << 32) | (correlation & 0xffffffffu), p->header.pid,
            tid, micros(c, ns));
}

static void cuda_event(struct pi_chrome_trace *c, const struct pi_reader *reader,
                       const struct pi_process_info *p, const struct pi_event *ev)
{
    FILE *out = c->out;
    const struct pi_record *r = &ev->rec;
    if (r->flags & PI_CUDA_NESTED)
        return;
    char name[600];
    switch (r->kind) {
    case PI_REC_GPU_LAUNCH: {
        const char *kernel = r->arg[1] ? pi_reader_string(reader, r->arg[1]) : NULL;
        pi_demangle(kernel ? kernel : "(kernel)", name, sizeof(name));
        slice(c, p, ev, name, "cuda");
        fprintf(out, ",\"args\":{\"api\":\"%s\",\"correlation\":%" PRIu64 "}}",
                pi_cuda_api_name(PI_CUDA_API(r->flags)), r->arg[0]);
        flow(c, p, r->tid, ev->ts_ns + ev->dur_ns, r->arg[0], 1);
        break;
    }
    case PI_REC_GPU_COPY:
        snprintf(name, sizeof(name), "%s %s", pi_cuda_api_name(PI_CUDA_API(r->flags)),
                 pi_gpu_copy_kind_name(PI_CUDA_SUBTYPE(r->flags)));
        slice(c, p, ev, name, "cuda");
        fprintf(out, ",\"args\":{\"bytes\":%" PRIu64 ",\"pinned\":%s,\"correlation\":%" PRIu64 "}}",
                r->arg[0], (r->flags & PI_CUDA_PINNED) ? "true" : "false", r->arg[1]);
        flow(c, p, r->tid, ev->ts_ns + ev->dur_ns, r->arg[1], 1);
        break;
    case PI_REC_GPU_ALLOC:
    case PI_REC_GPU_FREE:
        slice(c, p, ev, pi_cuda_api_name(PI_CUDA_API(r->flags)), "cuda");
        fprintf(out, ",\"args\":{\"pointer\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64 "}}",
                r->arg[0], r->arg[1]);
        device_memory(c, p);
        break;
    case PI_REC_GPU_SYNC:
        slice(c, p, ev, pi_cuda_api_name(PI_CUDA_API(r->flags)), "cuda");
        fputs(",\"args\":{}}", out);
        break;
    case PI_REC_GPU_TIME: {
        /* event timing knows the duration, not the start: drawn from the launch's end */
        separator(c);
        fprintf(out, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                     "\"cat\":\"gpu\",\"name\":\"GPU work\",\"args\":{\"correlation\":%" PRIu64 "}}",
                p->header.pid, GPU_TRACK_TID, micros(c, ev->ts_ns), (double)ev->dur_ns / 1e3,
                r->arg[0]);
        flow(c, p, GPU_TRACK_TID, ev->ts_ns, r->arg[0], 0);
        break;
    }
    default:
        break;
    }
}

static void event(struct pi_chrome_trace *c, const struct pi_reader *reader,
                     const struct pi_process_info *p, const struct pi_event *ev)
{
    FILE *out = c->out;
    const struct pi_record *r = &ev->rec;
    switch (r->kind) {
    case PI_REC_IO: {
        slice(c, p, ev, pi_io_op_name(PI_IO_OP(r->flags)), "io");
        fprintf(out, ",\"args\":{\"fd\":%" PRId64 ",\"class\":\"%s\",\"result\":%" PRId64,
                (int64_t)r->arg[0], pi_fd_class_name(PI_IO_CLASS(r->flags)), (int64_t)r->arg[1]);
        const char *path = r->arg[2] ? pi_reader_string(reader, r->arg[2]) : NULL;
        if (path) {
            fputs(",\"path\":", out);
            pi_json_string(out, path);
        }
        fputs("}}", out);
        break;
    }
    case PI_REC_WAIT:
        slice(c, p, ev, pi_wait_kind_name((unsigned)r->arg[0]), "wait");
        fprintf(out, ",\"args\":{\"object\":\"0x%" PRIx64 "\"}}", r->arg[1]);
        break;
    case PI_REC_NVTX_RANGE:
        slice(c, p, ev, r->arg[0] ? pi_reader_string(reader, r->arg[0]) : "(NVTX range)", "nvtx");
        fputs(",\"args\":{}}", out);
        break;
    case PI_REC_RANGE:
        slice(c, p, ev, r->arg[1] ? pi_reader_string(reader, r->arg[1]) : "range", "user");
        fprintf(out, ",\"args\":{\"value\":%" PRIu64 "}}", r->arg[0]);
        break;
    case PI_REC_MARK:
        instant(c, p, ev, r->arg[1] ? pi_reader_string(reader, r->arg[1]) : "mark");
        fprintf(out, ",\"args\":{\"value\":%" PRIu64 "}}", r->arg[0]);
        break;
    case PI_REC_FORK:
        instant(c, p, ev, "fork");
        fprintf(out, ",\"args\":{\"child\":%" PRId64 "}}", (int64_t)r->arg[0]);
        break;
    case PI_REC_EXEC:
        instant(c, p, ev, "exec");
        fputs(",\"args\":{\"path\":", out);
        pi_json_string(out, r->arg[0] ? pi_reader_string(reader, r->arg[0]) : "?");
        fputs("}}", out);
        break;
    case PI_REC_GPU_ALLOC:
    case PI_REC_GPU_FREE:
    case PI_REC_GPU_LAUNCH:
    case PI_REC_GPU_COPY:
    case PI_REC_GPU_SYNC:
    case PI_REC_GPU_TIME:
        cuda_event(c, reader, p, ev);
        break;
    case PI_REC_COLLECTIVE: { /* on the calling thread: the host's part of the collective */
        char name[64];
        snprintf(name, sizeof(name), "nccl %s", pi_nccl_func_name(PI_NCCL_FUNC(r->flags)));
        slice(c, p, ev, name, "nccl");
        fprintf(out, ",\"args\":{\"count\":%" PRIu64 ",\"datatype\":\"%s\",\"comm\":\"0x%" PRIx64
                     "\",\"peer\":%d,\"grouped\":%s,\"failed\":%s}}",
                r->arg[0], pi_nccl_datatype_name(PI_NCCL_DATATYPE(r->flags)), r->arg[1],
                (int)PI_NCCL_PEER(r->arg[2]), (r->flags & PI_NCCL_GROUPED) ? "true" : "false",
                (r->flags & PI_FLAG_FAILED) ? "true" : "false");
        break;
    }
    case PI_REC_GEMM: { /* on the calling thread: the host's part; its kernels are slices */
        uint32_t m = PI_GEMM_LOW(r->arg[0]), n = PI_GEMM_HIGH(r->arg[0]);
        uint32_t k = PI_GEMM_LOW(r->arg[1]), batch = PI_GEMM_HIGH(r->arg[1]);
        const char *dtype = pi_gemm_dtype(PI_GEMM_A_TYPE(r->arg[2]), PI_GEMM_COMPUTE(r->arg[2]));
        slice(c, p, ev, "gemm", "cublas");
        fprintf(out, ",\"args\":{\"m\":%" PRIu32 ",\"n\":%" PRIu32 ",\"k\":%" PRIu32
                     ",\"batch\":%" PRIu32 ",\"dtype\":\"%s\",\"flops\":%.0f,\"failed\":%s}}",
                m, n, k, batch, dtype, 2.0 * m * n * (double)k * batch,
                (r->flags & PI_FLAG_FAILED) ? "true" : "false");
        break;
    }
    case PI_REC_SPAN: { /* a marked Python function's call, on the thread that made it */
        const char *name = pi_reader_string(reader, PI_SPAN_NAME(r->arg[0]));
        slice(c, p, ev, name ? name : "(span)", "span");
        fprintf(out, ",\"args\":{\"kind\":\"%s\",\"depth\":%u,",
                pi_span_kind_name(PI_SPAN_KIND(r->arg[0])), PI_SPAN_DEPTH(r->arg[0]));
        if (r->arg[1] != PI_SPAN_CPU_UNMEASURED) /* else not read: left out */
            fprintf(out, "\"cpu_ns\":%" PRIu64 ",", r->arg[1]);
        fprintf(out, "\"device_bytes_change\":%" PRId64 ",\"raised\":%s}}", (int64_t)r->arg[2],
                (r->arg[0] & PI_SPAN_RAISED) ? "true" : "false");
        break;
    }
    case PI_REC_PROC_SAMPLE:
        separator(c);
        fprintf(out, "{\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,\"name\":\"rss\",\"args\":{\"MB\":%.3f}}",
                p->header.pid, micros(c, ev->ts_ns), (double)r->arg[0] / 1e6);
        break;
    default:
        break;
    }
}

/* The analysis' callbacks, each handed this trace as its context. */
static void on_begin(void *context, const struct pi_analysis *analysis)
{
    struct pi_chrome_trace *c = context;
    c->analysis = analysis;
    begin(c);
}

static void on_process(void *context, const struct pi_analysis *analysis,
                       const struct pi_process_info *p)
{
    (void)analysis;
    process(context, p);
}

static void on_event(void *context, const struct pi_analysis *analysis,
                     const struct pi_reader *reader, const struct pi_process_info *p,
                     const struct pi_event *ev)
{
    (void)analysis;
    event(context, reader, p, ev);
}

static void on_process_end(void *context, const struct pi_analysis *analysis,
                           const struct pi_process_info *p)
{
    (void)analysis;
    thread_names(context, p);
}

static void on_end(void *context, const struct pi_analysis *analysis)
{
    (void)analysis;
    end(context);
}

void pi_chrome_trace_observer(struct pi_chrome_trace *trace, FILE *out,
                              struct pi_analysis_observer *observer)
{
    *trace = (struct pi_chrome_trace){.out = out, .first = 1};
    *observer = (struct pi_analysis_observer){
        .context = trace,
        .keep_memory_changes = 1,
        .sequential = 1, /* one array of events in time order per file, files in order */
        .begin = on_begin,
        .process = on_process,
        .event = on_event,
        .process_end = on_process_end,
        .end = on_end,
    };
}
