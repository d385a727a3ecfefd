/*
 * cmd_report.c - `profinject-analyze [report] [options] FILE|DIR...`: the
 * report users run after every recording. Text on stdout; JSON, Chrome
 * trace and HTML files on request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pass/analysis.h"
#include "commands.h"
#include "reports/export_csv.h"
#include "reports/export_parquet.h"
#include "reports/format/output_file.h"
#include "reports/report.h"
#include "reader/trace_inputs.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: profinject-analyze [report] [options] FILE|DIR...\n"
            "  --json FILE           the report as JSON (schema: analyzer/REPORT.md)\n"
            "  --chrome-trace FILE   timeline for Perfetto UI / chrome://tracing\n"
            "  --html FILE           one self-contained page with plots\n"
            "  --export DIR          per rank, step and kernel tables (for DuckDB, Spark, pandas)\n"
            "  --export-format F     csv, parquet or both (default: both where the Python has\n"
            "                        pyarrow, else csv; PROFINJECT_PYTHON names the Python)\n"
            "  --exact               exact percentiles (keeps every duration in memory)\n"
            "  --warmup N            steps counted as warm-up (default: 10%%, 1 to 10)\n"
            "  --quiet               no text report on stdout\n"
            "  -j, --jobs N          read N files at once, each whole by one thread, merged in\n"
            "                        file order: the same output as -j 1 (default 1; 0: one per\n"
            "                        online CPU); with --chrome-trace files are read one by one\n");
}

struct report_options {
    const char *json, *chrome, *html, *export_dir;
    enum pi_export_format export_format;
    int quiet;
    struct pi_analysis_options analysis;
    char **inputs;
    int input_count;
};

/* The number of files read at once: 1 to 1024, 0 for one per online CPU. */
static int parse_jobs(const char *text, unsigned *jobs)
{
    double n;
    if (pi_parse_count("--jobs", text, 0, 1024, &n) != 0)
        return -1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *jobs = n > 0 ? (unsigned)n : cpus > 0 ? (unsigned)(cpus < 1024 ? cpus : 1024) : 1;
    return 0;
}

/* Options and inputs in any order; 0, or -1 on a usage error. */
static int parse(int argc, char **argv, struct report_options *o)
{
    memset(o, 0, sizeof(*o));
    o->inputs = calloc((size_t)argc + 1, sizeof(char *));
    if (!o->inputs)
        return -1;
    o->analysis.jobs = 1;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--jobs") == 0 || strncmp(arg, "-j", 2) == 0) {
            /* -j N, --jobs N, -jN */
            const char *value = arg[2] && arg[1] == 'j' ? arg + 2 : ++i < argc ? argv[i] : "";
            if (parse_jobs(value, &o->analysis.jobs) != 0)
                return -1;
            continue;
        }
        if (!(arg[0] == '-' && arg[1] == '-')) {
            o->inputs[o->input_count++] = argv[i];
            continue;
        }
        const char **target = strcmp(arg, "--json") == 0           ? &o->json
                              : strcmp(arg, "--chrome-trace") == 0 ? &o->chrome
                              : strcmp(arg, "--html") == 0         ? &o->html
                              : strcmp(arg, "--export") == 0       ? &o->export_dir
                                                                   : NULL;
        if (target) {
            if (++i == argc)
                return -1;
            *target = argv[i];
        } else if (strcmp(arg, "--export-format") == 0) {
            if (++i == argc || pi_export_format_parse(argv[i], &o->export_format) != 0) {
                fprintf(stderr, "profinject-analyze: --export-format takes csv, parquet or both\n");
                return -1;
            }
        } else if (strcmp(arg, "--exact") == 0) {
            o->analysis.exact = 1;
        } else if (strcmp(arg, "--quiet") == 0) {
            o->quiet = 1;
        } else if (strcmp(arg, "--warmup") == 0 && i + 1 < argc) {
            double steps;
            if (pi_parse_count("--warmup", argv[++i], 0, 1000000, &steps) != 0)
                return -1;
            o->analysis.warmup_steps = (unsigned)steps;
        } else if (strcmp(arg, "--help") == 0) {
            usage(stdout);
            exit(PI_EXIT_OK);
        } else {
            fprintf(stderr, "profinject-analyze: unknown option %s\n", arg);
            return -1;
        }
    }
    return o->input_count > 0 ? 0 : -1;
}

/* An output that is one of the inputs (by its name, a link or another path) would overwrite
 * the trace it is made from. */
static int output_is_input(const struct pi_trace_inputs *inputs, const char *option,
                           const char *path)
{
    int input = path ? pi_trace_inputs_find(inputs, path) : -1;
    if (input >= 0)
        fprintf(stderr,
                "profinject-analyze: %s %s is the input trace %s: refusing to overwrite it; "
                "name another file\n",
                option, path, inputs->paths[input]);
    return input >= 0;
}

static int outputs_are_inputs(const struct report_options *o, const struct pi_trace_inputs *inputs)
{
    int clash = output_is_input(inputs, "--json", o->json) |
                output_is_input(inputs, "--html", o->html) |
                output_is_input(inputs, "--chrome-trace", o->chrome);
    static const char *const tables[] = {
        "steps.csv",     "kernels.csv",     "collectives.csv",     "ranks.csv",
        "gemm_shapes.csv", "kernels_by_module.csv", "steps.parquet", "kernels.parquet",
        "collectives.parquet", "ranks.parquet", "gemm_shapes.parquet", "kernels_by_module.parquet"};
    for (size_t i = 0; o->export_dir && i < sizeof(tables) / sizeof(tables[0]); i++) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", o->export_dir, tables[i]);
        clash |= output_is_input(inputs, "--export", path);
    }
    return clash;
}

/* pi_analyse_paths - run the analysis over files and directories (shared with compare) */
int pi_analyse_paths(struct pi_analysis *analysis, const struct pi_analysis_options *options,
                     char **args, int count)
{
    struct pi_trace_inputs inputs;
    memset(analysis, 0, sizeof(*analysis));
    if (pi_trace_inputs_collect(&inputs, args, count) != 0) {
        pi_trace_inputs_free(&inputs);
        return -1;
    }
    int result = pi_analysis_run(analysis, options, inputs.paths, inputs.count);
    pi_trace_inputs_free(&inputs);
    return result;
}

/* Several observers of one pass (the Chrome trace and the export), called in turn. */
struct fanout {
    const struct pi_analysis_observer *to[2];
    int count;
};

/* One file's contexts, one per observer; NULL: that observer does not see the file. */
struct fanout_file {
    const struct fanout *fanout;
    void *to[2];
};

#define FAN_OUT(callback, ...)                                                                     \
    do {                                                                                           \
        struct fanout *f = context;                                                                \
        for (int i = 0; i < f->count; i++)                                                         \
            if (f->to[i]->callback)                                                                \
                f->to[i]->callback(f->to[i]->context, __VA_ARGS__);                                \
    } while (0)

/* the same for the callbacks about one file, each observer with its context for it */
#define FAN_OUT_FILE(callback, ...)                                                                \
    do {                                                                                           \
        struct fanout_file *file = file_context;                                                   \
        for (int i = 0; i < file->fanout->count; i++)                                              \
            if (file->fanout->to[i]->callback && file->to[i])                                      \
                file->fanout->to[i]->callback(file->to[i], __VA_ARGS__);                           \
    } while (0)

static void fan_begin(void *context, const struct pi_analysis *a) { FAN_OUT(begin, a); }
static void *fan_open_file(void *context)
{
    struct fanout *f = context;
    struct fanout_file *file = calloc(1, sizeof(*file));
    if (file)
        file->fanout = f;
    for (int i = 0; file && i < f->count; i++)
        file->to[i] = f->to[i]->open_file ? f->to[i]->open_file(f->to[i]->context)
                                          : f->to[i]->context;
    return file;
}
static void fan_process(void *file_context, const struct pi_analysis *a,
                        const struct pi_process_info *p)
{
    FAN_OUT_FILE(process, a, p);
}
static void fan_event(void *file_context, const struct pi_analysis *a,
                      const struct pi_reader *reader, const struct pi_process_info *p,
                      const struct pi_event *ev)
{
    FAN_OUT_FILE(event, a, reader, p, ev);
}
static void fan_process_end(void *file_context, const struct pi_analysis *a,
                            const struct pi_process_info *p)
{
    FAN_OUT_FILE(process_end, a, p);
}
static void fan_commit_file(void *context, void *file_context, const struct pi_analysis *a,
                            const struct pi_process_info *p)
{
    struct fanout *f = context;
    struct fanout_file *file = file_context;
    for (int i = 0; i < f->count; i++)
        if (f->to[i]->commit_file && file->to[i])
            f->to[i]->commit_file(f->to[i]->context, file->to[i], a, p);
    free(file);
}
static void fan_end(void *context, const struct pi_analysis *a) { FAN_OUT(end, a); }

/* @observer calling each of @fanout's in turn; the one itself when there is one */
static const struct pi_analysis_observer *fan_out(struct fanout *f,
                                                  struct pi_analysis_observer *observer)
{
    if (f->count <= 1)
        return f->count ? f->to[0] : NULL;
    int keep = 0, sequential = 0;
    for (int i = 0; i < f->count; i++) {
        keep |= f->to[i]->keep_memory_changes;
        sequential |= f->to[i]->sequential;
    }
    *observer = (struct pi_analysis_observer){f,          keep,          sequential,
                                              fan_begin,  fan_open_file, fan_process,
                                              fan_event,  fan_process_end, fan_commit_file,
                                              fan_end};
    return observer;
}

int pi_cmd_report(int argc, char **argv)
{
    struct report_options o;
    if (parse(argc, argv, &o) != 0) {
        free(o.inputs);
        usage(stderr);
        return PI_EXIT_USAGE;
    }
    o.analysis.progress = isatty(2);
    struct pi_trace_inputs inputs;
    if (pi_trace_inputs_collect(&inputs, o.inputs, o.input_count) != 0) {
        pi_trace_inputs_free(&inputs);
        free(o.inputs);
        return PI_EXIT_BAD_INPUT;
    }
    if (outputs_are_inputs(&o, &inputs)) {
        pi_trace_inputs_free(&inputs);
        free(o.inputs);
        return PI_EXIT_USAGE;
    }
    pi_output_mode_set(pi_trace_inputs_mode(&inputs));
    char chrome_tmp[4096];
    FILE *chrome_out = NULL;
    struct pi_chrome_trace chrome;
    struct pi_analysis_observer observer, export_observer, both;
    struct fanout observers = {{NULL, NULL}, 0};
    if (o.chrome) {
        chrome_out = pi_create_temporary(o.chrome, chrome_tmp, sizeof(chrome_tmp));
        if (!chrome_out) {
            pi_trace_inputs_free(&inputs);
            free(o.inputs);
            return pi_report_written("Chrome trace", o.chrome, -1);
        }
        pi_chrome_trace_observer(&chrome, chrome_out, &observer);
        observers.to[observers.count++] = &observer;
    }
    static struct pi_export export; /* large: a path and the tables */
    if (o.export_dir) {
        if (pi_export_observer(&export, o.export_dir, &export_observer) != 0) {
            pi_trace_inputs_free(&inputs);
            free(o.inputs);
            return pi_report_written("export to", o.export_dir, -1);
        }
        observers.to[observers.count++] = &export_observer;
    }
    o.analysis.observer = fan_out(&observers, &both);
    struct pi_analysis analysis;
    memset(&analysis, 0, sizeof(analysis));
    int status = pi_analysis_run(&analysis, &o.analysis, inputs.paths, inputs.count) == 0
                     ? PI_EXIT_OK
                     : PI_EXIT_BAD_INPUT;
    pi_trace_inputs_free(&inputs);
    if (o.chrome) {
        /* written only where the analysis read something, like the other files */
        int kept = pi_commit_temporary(chrome_out, chrome_tmp, o.chrome, analysis.process_count > 0);
        if (analysis.process_count > 0 && pi_report_written("Chrome trace", o.chrome, kept) != PI_EXIT_OK)
            status = PI_EXIT_BAD_INPUT;
    }
    /* The files first, then the text: `... --json F | head` must still write F. */
    if (analysis.process_count > 0) {
        if (o.json && pi_report_written("JSON report", o.json, pi_report_json(o.json, &analysis)))
            status = PI_EXIT_BAD_INPUT;
        if (o.html && pi_report_written("HTML report", o.html, pi_report_html(o.html, &analysis)))
            status = PI_EXIT_BAD_INPUT;
        if (o.export_dir &&
            pi_report_written("tables in", o.export_dir, pi_export_finish(&export, &analysis)))
            status = PI_EXIT_BAD_INPUT;
        else if (o.export_dir && pi_export_parquet(o.export_dir, o.export_format) != 0)
            status = PI_EXIT_BAD_INPUT;
        if (!o.quiet && pi_report_print_text(&analysis) != 0)
            status = PI_EXIT_BAD_INPUT;
    }
    if (o.export_dir && analysis.process_count == 0)
        pi_export_finish(&export, &analysis); /* closes the tables */
    pi_analysis_free(&analysis);
    free(o.inputs);
    return status;
}
