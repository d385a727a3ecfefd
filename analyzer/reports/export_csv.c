/* export_csv.c - `--export DIR`: CSV tables per rank, step, kernel and span (see export_csv.h). */
#include "export_csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/common/u64_map.h"
#include "analysis/gpu/collectives.h"
#include "analysis/gpu/gemm.h"
#include "analysis/gpu/gpu_modules.h"
#include "analysis/host/spans.h"
#include "analysis/host/steps.h"
#include "analysis/ranks/ranks.h"
#include "profinject/rank_identity.h"
#include "reports/format/kernel_labels.h"
#include "reports/format/output_file.h"

/* @text as one CSV field: quoted, inner quotes doubled. */
static void csv_text(FILE *out, const char *text)
{
    fputc('"', out);
    for (; text && *text; text++) {
        if (*text == '"')
            fputc('"', out);
        fputc(*text == '\n' ? ' ' : *text, out);
    }
    fputc('"', out);
}

static FILE *open_table(struct pi_export *e, const char *name, const char *columns)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", e->dir, name);
    FILE *out = pi_open_output(path);
    if (out)
        fprintf(out, "%s\n", columns);
    else
        e->failed = 1;
    return out;
}

/* The columns that say whose row it is: job, rank (-1: none), host, pid. */
static void whose(FILE *out, const struct pi_process_info *p)
{
    char job[160];
    pi_identity_job(p->identity ? p->identity : "", job, sizeof(job));
    csv_text(out, job);
    fprintf(out, ",%ld,", p->rank);
    csv_text(out, p->host);
    fprintf(out, ",%d", p->header.pid);
}

/* One file's kernels, counted while it is read, until its rows go out in file order; its
 * spans, a row a call, held in a file of their own (unlinked) until then. */
struct export_file {
    const char *dir;   /* the export's, where the spans' file goes */
    FILE *spans;       /* this file's span rows so far, NULL: none yet */
    char *whose;       /* the columns that say whose they are, as CSV text */
    int failed;        /* a span row could not be kept */
    struct pi_u64_map *launch_names;    /* correlation id -> kernel name id */
    struct pi_u64_map *kernels_by_name; /* kernel name id -> launches, GPU ns, max ns */
    /* tid + 1 -> the entry and resident memory change of its latest PI_REC_SPAN_HOST_MEMORY,
     * until the span record after it */
    struct pi_u64_map *host_memory;
    const struct pi_reader *reader;     /* while the file is read, for names */
    struct kernel_row {
        char *name;
        uint64_t launches, gpu_ns, max_ns;
    } *kernels; /* named at the file's end, while its strings are known */
    size_t kernel_count;
};

static void *open_file(void *context)
{
    struct pi_export *export = context;
    struct export_file *f = calloc(1, sizeof(*f));
    if (f)
        f->dir = export->dir;
    if (f && (!(f->launch_names = pi_u64_map_new()) || !(f->kernels_by_name = pi_u64_map_new()) ||
              !(f->host_memory = pi_u64_map_new()))) {
        pi_u64_map_free(f->launch_names);
        pi_u64_map_free(f->kernels_by_name);
        free(f);
        return NULL;
    }
    return f;
}

/* The file that holds @e's span rows until its place in the file order, made on its first
 * row beside the tables (no name: gone once closed). NULL when it cannot be made. */
static FILE *span_rows(struct export_file *e, const struct pi_process_info *p)
{
    if (e->spans || e->failed)
        return e->spans;
    char path[4200];
    snprintf(path, sizeof(path), "%s/.spans-XXXXXX", e->dir);
    int fd = mkstemp(path);
    size_t size;
    FILE *whose_text = open_memstream(&e->whose, &size);
    if (fd >= 0)
        unlink(path);
    if (fd >= 0 && whose_text && (e->spans = fdopen(fd, "w+"))) {
        whose(whose_text, p);
        fclose(whose_text);
        return e->spans;
    }
    if (fd >= 0)
        close(fd);
    if (whose_text)
        fclose(whose_text);
    e->failed = 1;
    return NULL;
}

/* One call of a marked Python function: whose, what, where, when (its entry on the wall clock,
 * CLOCK_REALTIME as steps.csv's start_unix_ns, so that a call joins the step it fell in). */
static void span_row(struct export_file *e, const struct pi_reader *reader,
                     const struct pi_process_info *p, const struct pi_event *ev)
{
    const struct pi_record *r = &ev->rec;
    FILE *out = span_rows(e, p);
    if (!out)
        return;
    int64_t to_wall = (int64_t)(p->header.start_realtime_ns - p->header.start_monotonic_ns);
    const char *name = pi_reader_string(reader, PI_SPAN_NAME(r->arg[0]));
    fprintf(out, "%s,", e->whose ? e->whose : "");
    csv_text(out, name ? name : "?");
    fprintf(out, ",%s,%u,%u,%lld,%llu,", pi_span_kind_name(PI_SPAN_KIND(r->arg[0])), r->tid,
            PI_SPAN_DEPTH(r->arg[0]), (long long)((int64_t)ev->ts_ns + to_wall),
            (unsigned long long)ev->dur_ns);
    if (r->arg[1] != PI_SPAN_CPU_UNMEASURED) /* else empty: not read, a null in Parquet */
        fprintf(out, "%llu", (unsigned long long)r->arg[1]);
    fprintf(out, ",%lld,", (long long)r->arg[2]);
    /* the resident memory its thread's record just before said it changed, where read */
    struct pi_u64_entry *host = pi_u64_map_get(e->host_memory, (uint64_t)r->tid + 1);
    if (host && host->value[0] == ev->ts_ns)
        fprintf(out, "%lld", (long long)host->value[1]);
    if (host)
        pi_u64_map_remove(e->host_memory, (uint64_t)r->tid + 1);
    fprintf(out, ",%s\n", (r->arg[0] & PI_SPAN_RAISED) ? "true" : "false");
}

static void on_event(void *file_context, const struct pi_analysis *a,
                     const struct pi_reader *reader, const struct pi_process_info *p,
                     const struct pi_event *ev)
{
    (void)a;
    struct export_file *e = file_context;
    const struct pi_record *r = &ev->rec;
    e->reader = reader;
    if (r->kind == PI_REC_SPAN) {
        span_row(e, reader, p, ev);
    } else if (r->kind == PI_REC_SPAN_HOST_MEMORY) { /* for the span record after it */
        struct pi_u64_entry *host = pi_u64_map_put(e->host_memory, (uint64_t)r->tid + 1);
        if (host) {
            host->value[0] = ev->ts_ns;
            host->value[1] = r->arg[1];
        }
    } else if (r->kind == PI_REC_GPU_LAUNCH && r->arg[0] && r->arg[1]) {
        struct pi_u64_entry *n = pi_u64_map_put(e->launch_names, r->arg[0]);
        if (n)
            n->value[0] = r->arg[1];
    } else if (r->kind == PI_REC_GPU_TIME) {
        /* the name as the GPU ran it (CUPTI), else the launch's */
        struct pi_u64_entry *launch = pi_u64_map_get(e->launch_names, r->arg[0]);
        uint64_t name = r->arg[2] ? r->arg[2] : launch ? launch->value[0] : 0;
        if (launch && !(r->flags & PI_GPU_TIME_PART))
            pi_u64_map_remove(e->launch_names, r->arg[0]);
        struct pi_u64_entry *k = name ? pi_u64_map_put(e->kernels_by_name, name) : NULL;
        if (!k)
            return;
        k->value[0]++;
        k->value[1] += ev->dur_ns;
        if (ev->dur_ns > k->value[2])
            k->value[2] = ev->dur_ns;
    }
}

/* The file is read: its kernels by name, before the reader and its strings go. */
static void on_process_end(void *file_context, const struct pi_analysis *a,
                           const struct pi_process_info *p)
{
    (void)a;
    (void)p;
    struct export_file *e = file_context;
    struct pi_u64_map *m = e->kernels_by_name;
    e->kernels = e->reader ? calloc(m->count + 1, sizeof(*e->kernels)) : NULL;
    for (size_t i = 0; e->kernels && i < m->capacity; i++) {
        const struct pi_u64_entry *k = &m->slots[i];
        if (!k->key)
            continue;
        const char *name = pi_reader_string(e->reader, k->key);
        e->kernels[e->kernel_count++] =
            (struct kernel_row){strdup(name ? name : "?"), k->value[0], k->value[1], k->value[2]};
    }
    pi_u64_map_free(e->launch_names);
    pi_u64_map_free(e->kernels_by_name);
    pi_u64_map_free(e->host_memory);
    e->launch_names = e->kernels_by_name = e->host_memory = NULL;
    e->reader = NULL;
}

static void write_steps(struct pi_export *e, const struct pi_process_info *p)
{
    /* wall-clock times, so that ranks of many hosts share one time line */
    int64_t to_wall = (int64_t)(p->header.start_realtime_ns - p->header.start_monotonic_ns);
    for (uint64_t i = 0; i < p->steps.count; i++) {
        struct pi_step_figures f;
        if (!pi_steps_figures(&p->steps, i, &f))
            continue;
        whose(e->steps, p);
        fprintf(e->steps, ",%llu,%s,%lld,%lld,%llu,%llu,%llu,%llu,%llu\n",
                (unsigned long long)i, i < p->steps.warmup ? "true" : "false",
                (long long)((int64_t)f.start + to_wall), (long long)((int64_t)f.end + to_wall),
                (unsigned long long)(f.end - f.start), (unsigned long long)f.lock,
                (unsigned long long)f.wait, (unsigned long long)f.sync,
                (unsigned long long)f.gpu);
    }
}

static void write_kernels(struct pi_export *e, const struct export_file *f,
                          const struct pi_process_info *p)
{
    for (size_t i = 0; i < f->kernel_count; i++) {
        const struct kernel_row *k = &f->kernels[i];
        whose(e->kernels, p);
        fputc(',', e->kernels);
        csv_text(e->kernels, k->name ? k->name : "?");
        fprintf(e->kernels, ",%llu,%llu,%llu\n", (unsigned long long)k->launches,
                (unsigned long long)k->gpu_ns, (unsigned long long)k->max_ns);
    }
}

/* The process's NCCL table: one row per function, datatype and size, bandwidths over GPU time. */
static void write_collectives(struct pi_export *e, const struct pi_process_info *p)
{
    const struct pi_collectives *c = p->collectives;
    for (size_t i = 0; c && i < c->row_count; i++) {
        const struct pi_collective_row *r = &c->rows[i];
        double seconds = (double)r->gpu_ns / 1e9;
        whose(e->collectives, p);
        fprintf(e->collectives, ",%s,%s,%llu,%llu,%llu,%llu,%llu,%llu,%.0f,%.0f\n",
                pi_nccl_func_name(r->func), pi_nccl_datatype_name(r->datatype),
                (unsigned long long)r->bucket, (unsigned long long)r->calls,
                (unsigned long long)r->failed, (unsigned long long)r->bytes,
                (unsigned long long)r->host_ns, (unsigned long long)r->gpu_ns,
                seconds > 0 ? (double)r->bytes / seconds : 0, seconds > 0 ? r->bus_bytes / seconds : 0);
    }
}

/* The process's matrix products: one row per shape and type, TFLOP/s over their kernels. */
static void write_gemm(struct pi_export *e, const struct pi_process_info *p)
{
    const struct pi_gemm *g = p->gemm;
    for (size_t i = 0; g && i < g->shape_count; i++) {
        const struct pi_gemm_shape *x = &g->shapes[i];
        whose(e->gemm, p);
        fprintf(e->gemm, ",%u,%u,%u,%u,%s,%llu,%llu,%llu,%llu,%.6g\n", x->m, x->n, x->k, x->batch,
                x->dtype, (unsigned long long)x->calls, (unsigned long long)x->kernels,
                (unsigned long long)x->flops, (unsigned long long)x->gpu_ns,
                x->gpu_ns ? (double)x->flops / (double)x->gpu_ns / 1e3 : 0.0);
    }
}

/* The span rows @f held, after the rows of the files before it. */
static void write_spans(struct pi_export *e, struct export_file *f)
{
    char buffer[65536];
    size_t n;
    if (f->failed || (f->spans && (fflush(f->spans) != 0 || ferror(f->spans))))
        e->failed = 1;
    if (!f->spans)
        return;
    rewind(f->spans);
    while ((n = fread(buffer, 1, sizeof(buffer), f->spans)) > 0)
        if (fwrite(buffer, 1, n, e->spans) != n)
            e->failed = 1;
    if (ferror(f->spans))
        e->failed = 1;
}

/* The file's rows, in file order: its steps (before the pass lets the figures of all ranks
 * but one go), kernels, collectives, products and spans. */
static void commit_file(void *context, void *file_context, const struct pi_analysis *a,
                        const struct pi_process_info *p)
{
    (void)a;
    struct pi_export *e = context;
    struct export_file *f = file_context;
    if (e->steps)
        write_steps(e, p);
    if (e->kernels)
        write_kernels(e, f, p);
    if (e->collectives)
        write_collectives(e, p);
    if (e->gemm)
        write_gemm(e, p);
    if (e->spans)
        write_spans(e, f);
    if (f->spans)
        fclose(f->spans);
    free(f->whose);
    for (size_t i = 0; i < f->kernel_count; i++)
        free(f->kernels[i].name);
    free(f->kernels);
    pi_u64_map_free(f->launch_names);
    pi_u64_map_free(f->kernels_by_name);
    pi_u64_map_free(f->host_memory);
    free(f);
}

int pi_export_observer(struct pi_export *e, const char *dir, struct pi_analysis_observer *observer)
{
    memset(e, 0, sizeof(*e));
    snprintf(e->dir, sizeof(e->dir), "%s", dir);
    unsigned mode = pi_output_mode();
    if (mkdir(dir, mode | (mode & 0444) >> 2) != 0 && errno != EEXIST) /* x where r */
        return -1;
    e->steps = open_table(e, "steps.csv",
                          "job,rank,host,pid,step,warmup,start_unix_ns,end_unix_ns,duration_ns,"
                          "collective_wait_ns,data_wait_ns,gpu_wait_ns,gpu_ns");
    e->kernels = open_table(e, "kernels.csv",
                            "job,rank,host,pid,kernel,launches,gpu_total_ns,gpu_max_ns");
    e->collectives = open_table(e, "collectives.csv",
                                "job,rank,host,pid,function,datatype,size_bucket,calls,failed,"
                                "bytes,host_ns,gpu_ns,algbw_bytes_per_s,busbw_bytes_per_s");
    e->gemm = open_table(e, "gemm_shapes.csv",
                         "job,rank,host,pid,m,n,k,batch,dtype,calls,kernels,flops,gpu_ns,"
                         "tflops_per_s");
    e->spans = open_table(e, "spans.csv",
                          "job,rank,host,pid,name,kind,tid,depth,start_ns,duration_ns,cpu_ns,"
                          "device_bytes_change,host_bytes_change,raised");
    if (e->failed)
        return -1;
    *observer = (struct pi_analysis_observer){
        .context = e,
        .open_file = open_file,
        .event = on_event,
        .process_end = on_process_end,
        .commit_file = commit_file,
    };
    return 0;
}

static void write_ranks(FILE *out, const struct pi_ranks *r)
{
    for (size_t i = 0; r && i < r->count; i++) {
        const struct pi_rank_summary *s = &r->ranks[i];
        double total = (double)s->total_ns;
        csv_text(out, r->job);
        fprintf(out, ",%ld,%ld,", s->rank, s->local_rank);
        csv_text(out, s->host);
        fprintf(out, ",%d,%llu,%llu,%.0f,%.0f,%llu,%llu,%llu,%llu,%llu,%s\n", s->pid,
                (unsigned long long)s->steps, (unsigned long long)s->warmup,
                pi_histogram_quantile((struct pi_histogram *)&s->step_ns, 0.5),
                pi_histogram_quantile((struct pi_histogram *)&s->step_ns, 0.95),
                (unsigned long long)s->total_ns, (unsigned long long)s->lock_total_ns,
                (unsigned long long)s->data_ns, (unsigned long long)s->sync_ns,
                (unsigned long long)s->slowest,
                total > 0 && r->straggler == s->rank ? "true" : "false");
    }
}

/* One kernel's part of one module path's (or autograd node's) GPU time: @row's kernels, most
 * GPU time first. */
static void write_module_kernels(FILE *out, const struct pi_gpu_modules *m,
                                 const struct pi_gpu_module *row,
                                 const struct pi_kernel_labels *labels, char *written)
{
    for (;;) {
        const struct pi_gpu_module_kernel *next = NULL;
        size_t at = 0;
        for (size_t i = 0; i < m->kernel_count; i++)
            if (!written[i] && strcmp(m->kernels[i].path, row->path) == 0 &&
                (!next || m->kernels[i].gpu_ns > next->gpu_ns))
                next = &m->kernels[at = i];
        if (!next)
            return;
        written[at] = 1;
        csv_text(out, row->path);
        fprintf(out, ",%u,", row->depth);
        csv_text(out, pi_kernel_label(labels, next->kernel));
        fputc(',', out);
        csv_text(out, next->kernel);
        fprintf(out, ",%.0f,%.1f,%llu,%.6f\n", next->gpu_ns, next->launches,
                (unsigned long long)next->samples,
                m->gpu_ns ? next->gpu_ns / (double)m->gpu_ns : 0);
    }
}

/* kernels_by_module.csv: the module table's rows (and the backward pass's nodes), each with
 * its kernels' estimated parts; every process together, as the table is. */
static void write_kernels_by_module(FILE *out, const struct pi_analysis *a)
{
    struct pi_gpu_modules m;
    if (pi_gpu_modules_find(a, &m) != 0)
        return;
    struct pi_kernel_labels labels;
    pi_kernel_labels_make(a, &labels);
    char *written = calloc(m.kernel_count + 1, 1);
    for (size_t r = 0; written && r < m.count; r++)
        write_module_kernels(out, &m, &m.rows[r], &labels, written);
    free(written);
    pi_kernel_labels_free(&labels);
    pi_gpu_modules_free(&m);
}

int pi_export_finish(struct pi_export *e, const struct pi_analysis *a)
{
    FILE *ranks = open_table(e, "ranks.csv",
                             "job,rank,local_rank,host,pid,steps,warmup_steps,step_p50_ns,"
                             "step_p95_ns,steady_ns,collective_wait_ns,data_wait_ns,gpu_wait_ns,"
                             "slowest_steps,straggler");
    if (ranks)
        write_ranks(ranks, a->ranks);
    FILE *modules = open_table(e, "kernels_by_module.csv",
                               "module_path,depth,kernel,kernel_full,gpu_ns,launches,samples,share");
    if (modules)
        write_kernels_by_module(modules, a);
    FILE *tables[] = {ranks, modules, e->steps, e->kernels, e->collectives, e->gemm, e->spans};
    for (size_t i = 0; i < sizeof(tables) / sizeof(*tables); i++)
        if (tables[i] && (ferror(tables[i]) | fclose(tables[i])) != 0)
            e->failed = 1;
    e->steps = e->kernels = e->collectives = e->gemm = e->spans = NULL;
    return e->failed ? -1 : 0;
}
