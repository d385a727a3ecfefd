/*
 * cmd_merge.c - `profinject-analyze merge [options] DIR|PARTIAL...`: the
 * report of the partial files `partial` made (analysis/pass/partial.h),
 * byte for byte the one `report` makes of their traces at once. A
 * directory's partials are taken in the order of their traces' paths, as
 * `report` takes a directory of traces; files named one by one in the
 * order given.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pass/analysis.h"
#include "analysis/pass/partial.h"
#include "analysis/pass/partial_pass.h"
#include "commands.h"
#include "reader/trace_inputs.h"
#include "reports/format/output_file.h"
#include "reports/report.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: profinject-analyze merge [options] DIR|PARTIAL...\n"
            "  the report of the partials `profinject-analyze partial` wrote: the same as\n"
            "  `profinject-analyze report` of their traces (a directory: its *.pipartial, in\n"
            "  the order of their traces' paths; files: in the order given)\n"
            "  --json FILE           the report as JSON (schema: analyzer/REPORT.md)\n"
            "  --html FILE           one self-contained page with plots\n"
            "  --quiet               no text report on stdout\n"
            "  (--chrome-trace and --export need every event: run report on the traces)\n");
}

/* One partial to merge: its path, and its trace's path to order a directory's by. */
struct input {
    char *path;
    char *trace;
};

static int by_trace(const void *a, const void *b)
{
    return strcmp(((const struct input *)a)->trace, ((const struct input *)b)->trace);
}

struct inputs {
    struct input *at;
    size_t count, capacity;
    struct pi_analysis_options options; /* of the first */
};

/* @path's head read and kept; 0, or -1 with a message */
static int add(struct inputs *in, const char *path)
{
    if (in->count == in->capacity) {
        size_t capacity = in->capacity ? 2 * in->capacity : 64;
        struct input *grown = realloc(in->at, capacity * sizeof(*grown));
        if (!grown)
            return -1;
        in->at = grown;
        in->capacity = capacity;
    }
    struct pi_partial_head head;
    char why[700];
    if (pi_partial_peek(path, &head, why, sizeof(why)) != 0) {
        fprintf(stderr, "profinject-analyze: %s\n", why);
        free(head.trace_path);
        return -1;
    }
    if (in->count == 0)
        in->options = head.options;
    in->at[in->count].path = strdup(path);
    in->at[in->count++].trace = head.trace_path;
    return 0;
}

static int is_partial_name(const char *name)
{
    size_t n = strlen(name);
    return n > 10 && strcmp(name + n - 10, ".pipartial") == 0;
}

/* A directory's partials, sorted by their traces' paths. */
static int add_directory(struct inputs *in, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 1; /* not a directory: a file */
    size_t first = in->count;
    int failed = 0;
    struct dirent *e;
    while (!failed && (e = readdir(d)) != NULL) {
        if (!is_partial_name(e->d_name))
            continue;
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        failed = add(in, path) != 0;
    }
    closedir(d);
    if (!failed && in->count == first) {
        fprintf(stderr,
                "profinject-analyze: %s: no partial files (*.pipartial) in it; make them with "
                "`profinject-analyze partial TRACE -o %s`\n",
                dir, dir);
        return -1;
    }
    qsort(in->at + first, in->count - first, sizeof(*in->at), by_trace);
    return failed ? -1 : 0;
}

static void free_inputs(struct inputs *in)
{
    for (size_t i = 0; i < in->count; i++) {
        free(in->at[i].path);
        free(in->at[i].trace);
    }
    free(in->at);
}

/* An output named like one of the partials would overwrite it. */
static int clobbers(const struct pi_trace_inputs *partials, const char *option, const char *path)
{
    int found = path ? pi_trace_inputs_find(partials, path) : -1;
    if (found >= 0)
        fprintf(stderr, "profinject-analyze: %s %s is the partial %s: refusing to overwrite it\n",
                option, path, partials->paths[found]);
    return found >= 0;
}

static int parse(int argc, char **argv, const char **json, const char **html, int *quiet,
                 struct inputs *in)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--json") == 0 && i + 1 < argc) {
            *json = argv[++i];
        } else if (strcmp(arg, "--html") == 0 && i + 1 < argc) {
            *html = argv[++i];
        } else if (strcmp(arg, "--quiet") == 0) {
            *quiet = 1;
        } else if (strcmp(arg, "--help") == 0) {
            usage(stdout);
            exit(PI_EXIT_OK);
        } else if (strcmp(arg, "--chrome-trace") == 0 || strcmp(arg, "--export") == 0) {
            fprintf(stderr,
                    "profinject-analyze: merge: %s needs every event of the traces, which "
                    "partials do not keep: run report on the traces for it\n",
                    arg);
            return PI_EXIT_USAGE;
        } else if (arg[0] == '-') {
            fprintf(stderr, "profinject-analyze: merge: unknown option %s\n", arg);
            usage(stderr);
            return PI_EXIT_USAGE;
        } else {
            int directory = add_directory(in, arg);
            if (directory < 0 || (directory > 0 && add(in, arg) != 0))
                return PI_EXIT_BAD_INPUT;
        }
    }
    if (in->count == 0) {
        usage(stderr);
        return PI_EXIT_USAGE;
    }
    return PI_EXIT_OK;
}

int pi_cmd_merge(int argc, char **argv)
{
    const char *json = NULL, *html = NULL;
    int quiet = 0;
    struct inputs in = {NULL, 0, 0, {0, 0, NULL, 0, 0}};
    int status = parse(argc, argv, &json, &html, &quiet, &in);
    char **paths = status == PI_EXIT_OK ? calloc(in.count, sizeof(*paths)) : NULL;
    if (status == PI_EXIT_OK && !paths)
        status = PI_EXIT_BAD_INPUT;
    for (size_t i = 0; paths && i < in.count; i++)
        paths[i] = in.at[i].path;
    struct pi_trace_inputs partials = {paths, paths ? in.count : 0};
    if (status == PI_EXIT_OK && (clobbers(&partials, "--json", json) | clobbers(&partials, "--html", html)))
        status = PI_EXIT_USAGE;
    if (status != PI_EXIT_OK) {
        free(paths);
        free_inputs(&in);
        return status;
    }
    /* what is written holds the traces' command lines: no more readable than the partials */
    pi_output_mode_set(pi_trace_inputs_mode(&partials));
    struct pi_analysis analysis;
    int merged = pi_partial_merge(&analysis, &in.options, paths, in.count);
    free(paths);
    free_inputs(&in);
    if (merged < 0) {
        pi_analysis_free(&analysis);
        return PI_EXIT_BAD_INPUT;
    }
    status = merged ? PI_EXIT_BAD_INPUT : PI_EXIT_OK;
    if (json && pi_report_written("JSON report", json, pi_report_json(json, &analysis)))
        status = PI_EXIT_BAD_INPUT;
    if (html && pi_report_written("HTML report", html, pi_report_html(html, &analysis)))
        status = PI_EXIT_BAD_INPUT;
    if (!quiet && pi_report_print_text(&analysis) != 0)
        status = PI_EXIT_BAD_INPUT;
    pi_analysis_free(&analysis);
    return status;
}
