/*
 * report.h - the report outputs, one file each, all made from one
 * struct pi_analysis.
 */
#ifndef PI_REPORT_H
#define PI_REPORT_H

#include <stdio.h>

#include "analysis/pass/analysis.h"

/* The percentiles every latency table shows. */
#define PI_QUANTILE_COUNT 6
extern const double pi_quantiles[PI_QUANTILE_COUNT];
extern const char *const pi_quantile_names[PI_QUANTILE_COUNT];

void pi_report_text(FILE *out, struct pi_analysis *analysis);

/* pi_report_gpu_text - the GPU section of the text report (report_gpu.c) */
void pi_report_gpu_text(FILE *out, struct pi_analysis *analysis);

/* pi_report_json - write the JSON report (documented in analyzer/REPORT.md) to @path; 0 or -1 */
int pi_report_json(const char *path, struct pi_analysis *analysis);

/* pi_report_json_object - the same report as a cJSON tree (for compare); caller frees */
struct cJSON *pi_report_json_object(struct pi_analysis *analysis);

/* pi_report_html - the self-contained HTML page with SVG plots; 0 or -1 */
int pi_report_html(const char *path, struct pi_analysis *analysis);

/* The Chrome trace (Trace Event Format), streamed during the analysis' pass. */
struct pi_chrome_trace {
    FILE *out;
    int first; /* no event written yet */
    const struct pi_analysis *analysis;
};

/**
 * pi_chrome_trace_observer - make @observer write the Chrome trace to @out
 * Hand @observer to the analysis in its options; @trace holds the state and
 * must live as long as the pass.
 */
void pi_chrome_trace_observer(struct pi_chrome_trace *trace, FILE *out,
                              struct pi_analysis_observer *observer);

/* pi_output_mode_set - the permission bits of the files written from here on (the
 * inputs' own, pi_trace_inputs_mode; 0600 until told), less the umask */
void pi_output_mode_set(unsigned mode);
unsigned pi_output_mode(void);

/* pi_open_output - @path created or emptied for writing, with the output mode */
FILE *pi_open_output(const char *path);

/* pi_write_file_atomically - write @size bytes to @path through a temporary file and rename; 0 or -1 */
int pi_write_file_atomically(const char *path, const char *data, size_t size);

/**
 * pi_create_temporary - a new file beside @path, under a name no one can
 * foresee (mkstemp), to write and then rename to @path; its name in @temporary.
 * When @path is a device or a pipe (/dev/null, /dev/stdout), that itself, and
 * @temporary is "" (rename would replace the device node with a file)
 * Return: the stream, or NULL (errno set).
 */
FILE *pi_create_temporary(const char *path, char *temporary, size_t size);

/**
 * pi_commit_temporary - flush, sync and close @out, then rename @temporary to
 * @path when @keep and all of that succeeded; else remove it
 * Return: 0 when @path now holds it, -1 otherwise (errno set).
 */
int pi_commit_temporary(FILE *out, const char *temporary, const char *path, int keep);

#endif
