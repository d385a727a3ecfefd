/* file_merge.c - a file's own tables merged into the whole analysis (see file_merge.h). */
#include "file_merge.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/sites/python_sites.h"
#include "analysis/sites/python_time.h"

void pi_file_analysis_init(struct pi_analysis *own, const struct pi_analysis_options *options,
                           struct pi_process_info *process)
{
    memset(own, 0, sizeof(*own));
    own->options = *options;
    own->gpu.timing_source = -1;
    pi_latency_table_init(&own->calls, options->exact);
    pi_latency_table_init(&own->files, options->exact);
    /* the parts that number processes (python_time.c) see the file's as the first */
    own->processes = process;
    own->process_count = 1;
}

int pi_file_analysis_merge(struct pi_analysis *into, struct pi_analysis *own,
                           const struct pi_process_info *process)
{
    int failed = pi_latency_table_merge(&into->calls, &own->calls) |
                 pi_latency_table_merge(&into->files, &own->files) |
                 pi_python_sites_merge(into, own) |
                 pi_python_time_merge(into, own, (size_t)(process - into->processes));
    into->gpu.gpu_busy_ns += own->gpu.gpu_busy_ns;
    into->bytes_done += own->bytes_done;
    return failed ? -1 : 0;
}

void pi_file_analysis_free(struct pi_analysis *own)
{
    pi_latency_table_free(&own->calls);
    pi_latency_table_free(&own->files);
    pi_python_sites_free(own);
    pi_python_time_free(own);
    for (int w = 0; w < 3; w++)
        free(own->by_string_id[w]);
    memset(own, 0, sizeof(*own));
}
