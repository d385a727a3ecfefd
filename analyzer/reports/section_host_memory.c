/* section_host_memory.c - see section_host_memory.h. */
#include "section_host_memory.h"

#include <cjson/cJSON.h>

#include "reports/format/format.h"

static uint64_t since_base(const struct pi_analysis *a, uint64_t t)
{
    return t > a->base_ns ? t - a->base_ns : 0;
}

struct pi_host_peak pi_host_peak_of(const struct pi_analysis *a)
{
    const struct pi_host_memory *m = &a->host_memory;
    if (m->pss_peak_bytes)
        return (struct pi_host_peak){"PSS", m->pss_peak_bytes, m->pss_peak_ns,
                                     m->pss_processes_alive};
    return (struct pi_host_peak){"RSS", m->rss_peak_bytes, m->rss_peak_ns, m->processes_alive};
}

void pi_report_host_memory_text(FILE *out, const struct pi_analysis *a)
{
    const struct pi_host_memory *m = &a->host_memory;
    if (!m->rss_peak_bytes)
        return;
    if (!m->pss_peak_bytes) { /* the traces have RSS only */
        fprintf(out, "  host memory of the whole tree: peak %s at %s, %u process%s alive then "
                     "(from the RSS samples; per process below)\n",
                pi_format_bytes((double)m->rss_peak_bytes),
                pi_format_ns((double)since_base(a, m->rss_peak_ns)), m->processes_alive,
                m->processes_alive == 1 ? "" : "es");
        return;
    }
    fprintf(out, "  host memory of the whole tree: peak %s of PSS at %s, %u process%s alive then "
                 "(each shared page counted once",
            pi_format_bytes((double)m->pss_peak_bytes),
            pi_format_ns((double)since_base(a, m->pss_peak_ns)), m->pss_processes_alive,
            m->pss_processes_alive == 1 ? "" : "es");
    if (m->pss_processes_unread)
        fprintf(out, "; %u process%s that ended before reading PSS left out with the moments "
                     "they lived",
                m->pss_processes_unread, m->pss_processes_unread == 1 ? "" : "es");
    fprintf(out, ")\n  their RSS added up: peak %s at %s (a page shared by several processes "
                 "counts in each; per process below)\n",
            pi_format_bytes((double)m->rss_peak_bytes),
            pi_format_ns((double)since_base(a, m->rss_peak_ns)));
}

void pi_report_host_memory_json(cJSON *root, const struct pi_analysis *a)
{
    const struct pi_host_memory *m = &a->host_memory;
    /* the tree's concurrent peaks, never a sum of peaks that did not meet */
    cJSON *host = cJSON_AddObjectToObject(root, "host_memory");
    cJSON_AddNumberToObject(host, "rss_peak_bytes", (double)m->rss_peak_bytes);
    cJSON_AddNumberToObject(host, "rss_peak_at_ns", (double)since_base(a, m->rss_peak_ns));
    cJSON_AddNumberToObject(host, "processes_alive", (double)m->processes_alive);
    if (!m->pss_peak_bytes) /* RSS only: as every report before PSS was read */
        return;
    cJSON_AddStringToObject(host, "peak_figure", "pss");
    cJSON_AddNumberToObject(host, "pss_peak_bytes", (double)m->pss_peak_bytes);
    cJSON_AddNumberToObject(host, "pss_peak_at_ns", (double)since_base(a, m->pss_peak_ns));
    cJSON_AddNumberToObject(host, "pss_processes_alive", (double)m->pss_processes_alive);
    cJSON_AddNumberToObject(host, "pss_processes_unread", (double)m->pss_processes_unread);
}

void pi_report_process_pss_json(cJSON *memory, const struct pi_analysis *a,
                                const struct pi_process_info *p)
{
    if (!p->pss.count)
        return;
    cJSON_AddNumberToObject(memory, "pss_peak_bytes", (double)p->pss_peak);
    cJSON_AddNumberToObject(memory, "pss_peak_at_ns", (double)since_base(a, p->pss_peak_ns));
    cJSON *samples = cJSON_AddArrayToObject(memory, "pss_samples");
    for (uint32_t i = 0; i < p->pss.count; i++) {
        cJSON *point = cJSON_CreateArray();
        cJSON_AddItemToArray(point, cJSON_CreateNumber((double)since_base(a, p->pss.t[i])));
        cJSON_AddItemToArray(point, cJSON_CreateNumber((double)p->pss.v[i]));
        cJSON_AddItemToArray(samples, point);
    }
}
