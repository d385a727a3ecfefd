/* fuzz_common.c - runs the reader and all reports on one file (see fuzz_common.h). */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pass/analysis.h"
#include "analysis/sites/call_sites.h"
#include "reports/report.h"

/* The text report of @count copies of @path read with @jobs threads, malloc'd. */
static char *report_of_copies(char *path, size_t count, unsigned jobs)
{
    char *paths[2] = {path, path};
    struct pi_analysis_options options;
    memset(&options, 0, sizeof(options));
    options.jobs = jobs;
    struct pi_analysis analysis;
    pi_analysis_run(&analysis, &options, paths, count);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (out) {
        pi_report_text(out, &analysis);
        fclose(out);
    }
    pi_analysis_free(&analysis);
    return text;
}

/* Files read in parallel and merged in file order must say what one after the other says,
 * whatever the input (damaged tables, absurd timestamps): a difference is a finding. Two
 * copies: the second merges into tables the first filled. */
static void same_in_parallel(char *path)
{
    char *one_by_one = report_of_copies(path, 2, 1), *parallel = report_of_copies(path, 2, 2);
    if (one_by_one && parallel && strcmp(one_by_one, parallel) != 0) {
        fprintf(stderr, "the text report of 2 copies differs between -j 1 and -j 2\n");
        abort();
    }
    free(one_by_one);
    free(parallel);
}

void pi_fuzz_analyse_fd(int fd)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    /* the reader, record by record, the way dump uses it */
    char error[600];
    struct pi_reader *reader = pi_reader_open(path, error, sizeof(error));
    if (!reader)
        return;
    struct pi_event ev;
    while (pi_reader_next(reader, &ev) == PI_READ_EVENT) {
        if (ev.rec.kind == PI_REC_STRING)
            (void)pi_reader_string(reader, ev.rec.arg[0]);
        /* every stack as a call site, frames named: damaged definitions included */
        if (ev.rec.kind == PI_REC_STACK || ev.rec.kind == PI_REC_CALL_SITE)
            pi_call_site_free(pi_call_site_read(reader, ev.rec.arg[0]));
    }
    pi_reader_close(reader);
    /* every report, with the Chrome trace streamed to nowhere */
    FILE *sink = fopen("/dev/null", "w");
    struct pi_analysis_options options;
    memset(&options, 0, sizeof(options));
    struct pi_chrome_trace chrome;
    struct pi_analysis_observer observer;
    pi_chrome_trace_observer(&chrome, sink, &observer);
    options.observer = &observer;
    char *paths[1] = {path};
    struct pi_analysis analysis;
    pi_analysis_run(&analysis, &options, paths, 1);
    pi_report_text(sink, &analysis);
    struct cJSON *json = pi_report_json_object(&analysis);
    extern void cJSON_Delete(struct cJSON *);
    cJSON_Delete(json);
    pi_report_html("/dev/null", &analysis);
    /* only inputs read as far as records (most mutations end at the header): the fuzzer's
     * pace is spent where the merge has something to merge */
    int has_records = analysis.records > 0;
    pi_analysis_free(&analysis);
    fclose(sink);
    if (has_records)
        same_in_parallel(path);
}
