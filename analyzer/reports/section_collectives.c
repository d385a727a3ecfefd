/*
 * section_collectives.c - NCCL in the reports (see section_collectives.h).
 * Bandwidths are over GPU time: algorithm bandwidth = bytes / GPU time,
 * bus bandwidth = the same times nccl-tests' factor for the ranks of
 * each call's communicator; absent without GPU time.
 */
#include "section_collectives.h"

#include <cjson/cJSON.h>
#include <inttypes.h>

#include "analysis/gpu/collectives.h"
#include "reports/format/call_site_format.h"
#include "reports/format/format.h"
#include "reports/format/json_stream.h"

/* bytes per second over @gpu_ns, 0 without GPU time */
static double per_second(double bytes, uint64_t gpu_ns)
{
    return gpu_ns ? bytes * 1e9 / (double)gpu_ns : 0.0;
}

static const char *rate(double bytes_per_s)
{
    static char text[4][32];
    static int next;
    char *t = text[next++ % 4];
    if (bytes_per_s <= 0)
        return "-";
    snprintf(t, 32, "%s/s", pi_format_bytes(bytes_per_s));
    return t;
}

static void text_process(FILE *out, const struct pi_process_info *p)
{
    const struct pi_collectives *c = p->collectives;
    fprintf(out, "\nCOLLECTIVES (pid %d): %" PRIu64 " calls%s, %s, host %s, GPU %s; NCCL kernels "
                 "outside any call: GPU %s\n",
            p->header.pid, c->calls, c->failed ? " (and failed ones)" : "",
            pi_format_bytes((double)c->bytes), pi_format_ns((double)c->host_ns),
            pi_format_ns((double)c->gpu_ns), pi_format_ns((double)c->outside_gpu_ns));
    if (c->row_count)
        fprintf(out, "  %-15s %-10s %9s %6s %6s %10s %10s %10s %11s %11s\n", "function",
                "datatype", "size", "calls", "failed", "bytes", "host", "gpu", "alg bw",
                "bus bw");
    for (size_t i = 0; i < c->row_count; i++) {
        const struct pi_collective_row *r = &c->rows[i];
        fprintf(out, "  %-15s %-10s %9s %6" PRIu64 " %6" PRIu64 " %10s %10s %10s %11s %11s\n",
                pi_nccl_func_name(r->func), pi_nccl_datatype_name(r->datatype),
                pi_format_bytes((double)r->bucket), r->calls, r->failed,
                pi_format_bytes((double)r->bytes), pi_format_ns((double)r->host_ns),
                r->gpu_ns ? pi_format_ns((double)r->gpu_ns) : "-",
                rate(per_second((double)r->bytes, r->gpu_ns)),
                rate(per_second(r->bus_bytes, r->gpu_ns)));
    }
    for (size_t i = 0; i < c->comm_count; i++) {
        const struct pi_nccl_communicator *m = &c->comms[i];
        fprintf(out, "  communicator %016" PRIx64 ": rank %d of %d, %s%s in %s, %" PRIu64
                     " calls%s%s\n",
                m->hash, m->rank, m->nranks, pi_nccl_comm_op_name(m->op),
                m->failed ? " FAILED" : "", pi_format_ns((double)m->init_ns), m->calls,
                m->end_op ? ", ended by " : "", m->end_op ? pi_nccl_comm_op_name(m->end_op) : "");
    }
    for (size_t i = 0; i < c->outside_count; i++)
        fprintf(out, "  outside any call: %s: %" PRIu64 " kernels, GPU %s\n", c->outside[i].name,
                c->outside[i].kernels, pi_format_ns((double)c->outside[i].gpu_ns));
}

void pi_report_collectives_text(FILE *out, const struct pi_analysis *a)
{
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].collectives)
            text_process(out, &a->processes[i]);
}

static cJSON *json_process(const struct pi_process_info *p)
{
    const struct pi_collectives *c = p->collectives;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pid", p->header.pid);
    cJSON_AddNumberToObject(o, "calls", (double)c->calls);
    cJSON_AddNumberToObject(o, "failed", (double)c->failed);
    cJSON_AddNumberToObject(o, "bytes", (double)c->bytes);
    cJSON_AddNumberToObject(o, "host_ns", (double)c->host_ns);
    cJSON_AddNumberToObject(o, "gpu_ns", (double)c->gpu_ns);
    cJSON_AddNumberToObject(o, "outside_gpu_ns", (double)c->outside_gpu_ns);
    cJSON *rows = cJSON_AddArrayToObject(o, "table");
    for (size_t i = 0; i < c->row_count; i++) {
        const struct pi_collective_row *r = &c->rows[i];
        cJSON *ro = cJSON_CreateObject();
        cJSON_AddStringToObject(ro, "function", pi_nccl_func_name(r->func));
        cJSON_AddStringToObject(ro, "datatype", pi_nccl_datatype_name(r->datatype));
        cJSON_AddNumberToObject(ro, "size_bucket", (double)r->bucket);
        cJSON_AddNumberToObject(ro, "calls", (double)r->calls);
        cJSON_AddNumberToObject(ro, "failed", (double)r->failed);
        cJSON_AddNumberToObject(ro, "kernels", (double)r->kernels);
        cJSON_AddNumberToObject(ro, "bytes", (double)r->bytes);
        cJSON_AddNumberToObject(ro, "host_ns", (double)r->host_ns);
        cJSON_AddNumberToObject(ro, "gpu_ns", (double)r->gpu_ns);
        cJSON_AddNumberToObject(ro, "algbw_bytes_per_s", per_second((double)r->bytes, r->gpu_ns));
        cJSON_AddNumberToObject(ro, "busbw_bytes_per_s", per_second(r->bus_bytes, r->gpu_ns));
        cJSON_AddItemToArray(rows, ro);
    }
    cJSON *comms = cJSON_AddArrayToObject(o, "communicators");
    for (size_t i = 0; i < c->comm_count; i++) {
        const struct pi_nccl_communicator *m = &c->comms[i];
        cJSON *co = cJSON_CreateObject();
        char hash[17];
        snprintf(hash, sizeof(hash), "%016" PRIx64, m->hash);
        cJSON_AddStringToObject(co, "hash", hash);
        cJSON_AddStringToObject(co, "made_by", pi_nccl_comm_op_name(m->op));
        cJSON_AddBoolToObject(co, "failed", m->failed);
        cJSON_AddNumberToObject(co, "rank", m->rank);
        cJSON_AddNumberToObject(co, "nranks", m->nranks);
        cJSON_AddNumberToObject(co, "init_ns", (double)m->init_ns);
        cJSON_AddNumberToObject(co, "calls", (double)m->calls);
        if (m->end_op)
            cJSON_AddStringToObject(co, "ended_by", pi_nccl_comm_op_name(m->end_op));
        else
            cJSON_AddNullToObject(co, "ended_by");
        cJSON_AddItemToArray(comms, co);
    }
    cJSON *outside = cJSON_AddArrayToObject(o, "kernels_outside_calls");
    for (size_t i = 0; i < c->outside_count; i++) {
        cJSON *ko = cJSON_CreateObject();
        cJSON_AddStringToObject(ko, "name", c->outside[i].name);
        cJSON_AddNumberToObject(ko, "kernels", (double)c->outside[i].kernels);
        cJSON_AddNumberToObject(ko, "gpu_ns", (double)c->outside[i].gpu_ns);
        cJSON_AddItemToArray(outside, ko);
    }
    return o;
}

void pi_report_collectives_json(cJSON *root, const struct pi_analysis *a)
{
    cJSON *list = cJSON_AddArrayToObject(root, "collectives");
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].collectives)
            cJSON_AddItemToArray(list, json_process(&a->processes[i]));
}

void pi_report_collectives_json_stream(struct pi_json_stream *stream, const struct pi_analysis *a)
{
    pi_json_stream_open_array(stream, "collectives");
    for (size_t i = 0; i < a->process_count; i++) {
        if (!a->processes[i].collectives)
            continue;
        cJSON *process = json_process(&a->processes[i]);
        pi_json_stream_value(stream, NULL, process);
        cJSON_Delete(process);
    }
    pi_json_stream_close(stream);
}

static void html_process(FILE *out, const struct pi_process_info *p)
{
    const struct pi_collectives *c = p->collectives;
    fprintf(out, "<h2>Collectives (pid %d)</h2>\n<p>%" PRIu64 " NCCL calls, %s, GPU %s; NCCL "
                 "kernels outside any call: GPU %s. A group's GPU time is split evenly between "
                 "its calls.</p>\n<table class=\"collectives\"><tr><th>function</th>"
                 "<th>datatype</th><th>size</th><th>calls</th><th>failed</th><th>bytes</th>"
                 "<th>host</th><th>GPU</th><th>alg bw</th><th>bus bw</th></tr>\n",
            p->header.pid, c->calls, pi_format_bytes((double)c->bytes),
            pi_format_ns((double)c->gpu_ns), pi_format_ns((double)c->outside_gpu_ns));
    for (size_t i = 0; i < c->row_count; i++) {
        const struct pi_collective_row *r = &c->rows[i];
        fprintf(out, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%" PRIu64 "</td><td>%" PRIu64
                     "</td>",
                pi_nccl_func_name(r->func), pi_nccl_datatype_name(r->datatype),
                pi_format_bytes((double)r->bucket), r->calls, r->failed);
        fprintf(out, "<td>%s</td><td>%s</td>", pi_format_bytes((double)r->bytes),
                pi_format_ns((double)r->host_ns));
        fprintf(out, "<td>%s</td><td>%s</td><td>%s</td></tr>\n",
                r->gpu_ns ? pi_format_ns((double)r->gpu_ns) : "-",
                rate(per_second((double)r->bytes, r->gpu_ns)),
                rate(per_second(r->bus_bytes, r->gpu_ns)));
    }
    fputs("</table>\n", out);
    if (!c->comm_count && !c->outside_count)
        return;
    fputs("<table class=\"communicators\"><tr><th>communicator</th><th>rank</th><th>ranks</th>"
          "<th>made by</th><th>init</th><th>calls</th></tr>\n", out);
    for (size_t i = 0; i < c->comm_count; i++) {
        const struct pi_nccl_communicator *m = &c->comms[i];
        fprintf(out, "<tr><td>%016" PRIx64 "</td><td>%d</td><td>%d</td><td>%s%s</td><td>%s</td>"
                     "<td>%" PRIu64 "</td></tr>\n",
                m->hash, m->rank, m->nranks, pi_nccl_comm_op_name(m->op),
                m->failed ? " (failed)" : "", pi_format_ns((double)m->init_ns), m->calls);
    }
    for (size_t i = 0; i < c->outside_count; i++) {
        fputs("<tr><td colspan=\"4\">outside any call: ", out);
        pi_html_text(out, c->outside[i].name);
        fprintf(out, "</td><td>GPU %s</td><td>%" PRIu64 " kernels</td></tr>\n",
                pi_format_ns((double)c->outside[i].gpu_ns), c->outside[i].kernels);
    }
    fputs("</table>\n", out);
}

void pi_report_collectives_html(FILE *out, const struct pi_analysis *a)
{
    for (size_t i = 0; i < a->process_count; i++)
        if (a->processes[i].collectives)
            html_process(out, &a->processes[i]);
}
