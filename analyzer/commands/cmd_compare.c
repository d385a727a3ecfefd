/*
 * cmd_compare.c - `profinject-analyze compare BASE NEW [--threshold M=P%]...`:
 * a regression check for CI. BASE and NEW are trace files, directories or
 * JSON reports (--json). Every call present in both is compared on each
 * thresholded percentile; a call BASE made often that NEW never makes is a
 * regression too (a regression can hide as an absence), unless
 * --allow-missing; the host memory of the tree ("peak_memory") and the
 * device memory ("peak_device_memory") are compared apart. The exit status
 * is 3 when anything got worse than allowed, 2 for input that is not a
 * whole trace or report.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pass/analysis.h"
#include "commands.h"
#include "reports/report.h"
#include "reports/format/terminal_text.h"

/* stdout, with the names a trace gave shown safely */
static FILE *compare_out;

#define PI_EXIT_REGRESSION 3
#define MAX_THRESHOLDS 16

int pi_analyse_paths(struct pi_analysis *analysis, const struct pi_analysis_options *options,
                     char **args, int count);

struct threshold {
    char metric[32]; /* p50 ... max, mean, peak_memory */
    double fraction;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: profinject-analyze compare BASE NEW [--threshold METRIC=PERCENT%%]... "
                 "[--min-count N] [--allow-missing]\n"
                 "  BASE, NEW   trace file, trace directory, or a report written with --json\n"
                 "  METRIC      p50 p90 p95 p99 p99.9 max mean peak_memory peak_device_memory\n"
                 "              (default: p95=10%% peak_memory=10%% peak_device_memory=10%%)\n"
                 "  --min-count calls seen fewer times on either side are not compared "
                 "(default 20)\n"
                 "  --allow-missing  a call BASE made at least --min-count times and NEW never "
                 "made is not a regression\n"
                 "exit status: 0 no regression, 3 regression, 1 usage, 2 unreadable input\n");
}

static const char *text_of(const cJSON *object, const char *key)
{
    const cJSON *item = cJSON_GetObjectItem(object, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* Whether @root has what compare reads: a latency list of group, name, class and count, and
 * a process list; what is missing in @why. */
static int complete_report(const cJSON *root, char *why, size_t size)
{
    const cJSON *latency = cJSON_GetObjectItem(root, "latency"), *call;
    if (!cJSON_IsArray(latency) || !cJSON_IsArray(cJSON_GetObjectItem(root, "processes"))) {
        snprintf(why, size, "no \"latency\" or \"processes\" list");
        return 0;
    }
    int index = 0;
    cJSON_ArrayForEach(call, latency) {
        const char *missing = !text_of(call, "group")                           ? "group"
                              : !text_of(call, "name")                          ? "name"
                              : !text_of(call, "class")                         ? "class"
                              : !cJSON_IsNumber(cJSON_GetObjectItem(call, "count")) ? "count"
                                                                                : NULL;
        if (missing) {
            snprintf(why, size, "latency entry %d has no \"%s\"", index, missing);
            return 0;
        }
        index++;
    }
    return 1;
}

/* A report written with --json; NULL with the reason on stderr when it is not a whole one. */
static cJSON *load_json_report(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "profinject-analyze: %s: cannot open\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    size_t n = text ? fread(text, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!text)
        return NULL;
    text[n] = '\0';
    cJSON *root = cJSON_Parse(text);
    free(text);
    char why[160];
    const char *schema = root ? text_of(root, "schema") : NULL;
    if (!root)
        snprintf(why, sizeof(why), "not JSON, or cut short");
    else if (!schema || strcmp(schema, "profinject-report") != 0)
        snprintf(why, sizeof(why), "not a profinject report (no schema \"profinject-report\")");
    if (!root || !schema || strcmp(schema, "profinject-report") != 0 ||
        !complete_report(root, why, sizeof(why))) {
        fprintf(stderr, "profinject-analyze: %s: %s\n", path, why);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static cJSON *load_side(const char *path)
{
    size_t len = strlen(path);
    if (len >= 5 && strcmp(path + len - 5, ".json") == 0)
        return load_json_report(path);
    cJSON *report;
    struct pi_analysis analysis;
    struct pi_analysis_options options;
    memset(&options, 0, sizeof(options));
    char *args[1] = {(char *)path};
    if (pi_analyse_paths(&analysis, &options, args, 1) != 0 || analysis.process_count == 0) {
        pi_analysis_free(&analysis);
        return NULL;
    }
    report = pi_report_json_object(&analysis);
    pi_analysis_free(&analysis);
    return report;
}

static double number(const cJSON *object, const char *key)
{
    const cJSON *item = cJSON_GetObjectItem(object, key);
    return cJSON_IsNumber(item) ? item->valuedouble : 0.0;
}

/* The tree's host memory peak: at one moment (host_memory), or in reports
 * written before it existed the largest process's, never a sum of peaks. */
/* The largest @field of the @object of any process of @report. */
static double largest_of_processes(const cJSON *report, const char *object, const char *field)
{
    double largest = 0;
    const cJSON *process;
    cJSON_ArrayForEach(process, cJSON_GetObjectItem(report, "processes")) {
        double value = number(cJSON_GetObjectItem(process, object), field);
        largest = value > largest ? value : largest;
    }
    return largest;
}

static double peak_memory(const cJSON *report)
{
    const cJSON *host = cJSON_GetObjectItem(report, "host_memory");
    return host ? number(host, "rss_peak_bytes")
                : largest_of_processes(report, "memory", "rss_peak_bytes");
}

/* Both reports passed complete_report: their calls have group, name and class. */
static const cJSON *find_call(const cJSON *report, const cJSON *like)
{
    const cJSON *call;
    cJSON_ArrayForEach(call, cJSON_GetObjectItem(report, "latency"))
        if (strcmp(text_of(call, "group"), text_of(like, "group")) == 0 &&
            strcmp(text_of(call, "name"), text_of(like, "name")) == 0 &&
            strcmp(text_of(call, "class"), text_of(like, "class")) == 0)
            return call;
    return NULL;
}

/* The device memory peak: the largest process's. */
static double peak_device_memory(const cJSON *report)
{
    return largest_of_processes(report, "gpu_memory", "peak_bytes");
}

/* Calls BASE made at least @min_count times that NEW never made: each a line, and a
 * regression unless @allow_missing. */
static int missing_calls(const cJSON *base, const cJSON *now, double min_count, int allow_missing)
{
    int missing = 0;
    const cJSON *call;
    cJSON_ArrayForEach(call, cJSON_GetObjectItem(base, "latency")) {
        if (number(call, "count") < min_count || find_call(now, call))
            continue;
        char what[200];
        snprintf(what, sizeof(what), "%s %s %s", text_of(call, "group"), text_of(call, "name"),
                 text_of(call, "class"));
        fprintf(compare_out, "  %-34.34s %-11s %14.0f %14s %9s %8s  %s\n", what, "count", number(call, "count"),
               "none", "-", "-", allow_missing ? "missing (allowed)" : "MISSING");
        missing++;
    }
    return allow_missing ? 0 : missing;
}

/* Print one comparison; return 1 when it is a regression. */
static int check(const char *what, const char *metric, double base, double now, double allowed)
{
    double change = base > 0 ? now / base - 1 : (now > 0 ? 1e9 : 0);
    int worse = change > allowed;
    fprintf(compare_out, "  %-34.34s %-11s %14.0f %14.0f %+8.1f%% %7.0f%%  %s\n", what, metric, base, now,
           100 * change, 100 * allowed, worse ? "REGRESSION" : "ok");
    return worse;
}

static int parse_threshold(const char *text, struct threshold *t)
{
    const char *equals = strchr(text, '=');
    if (!equals || equals == text || (size_t)(equals - text) >= sizeof(t->metric))
        return -1;
    memcpy(t->metric, text, (size_t)(equals - text));
    t->metric[equals - text] = '\0';
    char *end;
    double percent = strtod(equals + 1, &end);
    if (end == equals + 1 || (*end && strcmp(end, "%") != 0) || percent < 0)
        return -1;
    t->fraction = percent / 100;
    static const char *const known[] = {"p50", "p90", "p95", "p99", "p99.9", "max", "mean",
                                        "peak_memory", "peak_device_memory"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(t->metric, known[i]) == 0)
            return 0;
    return -1;
}

static int compare_reports(const cJSON *base, const cJSON *now, const struct threshold *t, int n,
                           double min_count, int allow_missing)
{
    int regressions = 0, compared = 0;
    fprintf(compare_out, "  %-34s %-11s %14s %14s %9s %8s\n", "what", "metric", "base", "new", "change",
           "allowed");
    regressions += missing_calls(base, now, min_count, allow_missing);
    for (int k = 0; k < n; k++) {
        if (strcmp(t[k].metric, "peak_memory") == 0) {
            regressions += check("host memory peak (RSS, bytes)", "peak", peak_memory(base),
                                 peak_memory(now), t[k].fraction);
            compared++;
            continue;
        }
        if (strcmp(t[k].metric, "peak_device_memory") == 0) {
            regressions += check("device memory peak (bytes)", "peak", peak_device_memory(base),
                                 peak_device_memory(now), t[k].fraction);
            compared++;
            continue;
        }
        char key[sizeof(t[k].metric) + 4];
        snprintf(key, sizeof(key), "%.20s_ns", t[k].metric);
        for (char *c = key; *c; c++)
            if (*c == '.')
                *c = '_';
        const cJSON *call;
        cJSON_ArrayForEach(call, cJSON_GetObjectItem(base, "latency"))
        {
            const cJSON *other = find_call(now, call);
            if (!other || number(call, "count") < min_count || number(other, "count") < min_count)
                continue;
            char what[200];
            snprintf(what, sizeof(what), "%s %s %s (ns)", text_of(call, "group"),
                     text_of(call, "name"), text_of(call, "class"));
            regressions += check(what, t[k].metric, number(call, key), number(other, key),
                                 t[k].fraction);
            compared++;
        }
    }
    fprintf(compare_out, "%d compared, %d regressions\n", compared, regressions);
    return regressions;
}

int pi_cmd_compare(int argc, char **argv)
{
    struct threshold thresholds[MAX_THRESHOLDS];
    int n = 0;
    double min_count = 20;
    int allow_missing = 0;
    const char *sides[2] = {NULL, NULL};
    int side = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--threshold") == 0 && i + 1 < argc && n < MAX_THRESHOLDS) {
            if (parse_threshold(argv[++i], &thresholds[n++]) != 0) {
                fprintf(stderr, "profinject-analyze: bad threshold '%s'\n", argv[i]);
                usage(stderr);
                return PI_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--min-count") == 0 && i + 1 < argc) {
            if (pi_parse_count("--min-count", argv[++i], 0, 1e15, &min_count) != 0)
                return PI_EXIT_USAGE;
        } else if (strcmp(argv[i], "--allow-missing") == 0) {
            allow_missing = 1;
        } else if (argv[i][0] != '-' && side < 2) {
            sides[side++] = argv[i];
        } else {
            usage(stderr);
            return PI_EXIT_USAGE;
        }
    }
    if (side != 2) {
        usage(stderr);
        return PI_EXIT_USAGE;
    }
    if (n == 0) {
        thresholds[n++] = (struct threshold){"p95", 0.10};
        thresholds[n++] = (struct threshold){"peak_memory", 0.10};
        thresholds[n++] = (struct threshold){"peak_device_memory", 0.10};
    }
    cJSON *base = load_side(sides[0]), *now = base ? load_side(sides[1]) : NULL;
    if (!base || !now) {
        fprintf(stderr, "profinject-analyze: cannot compare: %s is not a whole trace or report\n",
                base ? sides[1] : sides[0]);
        cJSON_Delete(base);
        return PI_EXIT_BAD_INPUT;
    }
    compare_out = pi_terminal_stream(stdout);
    int regressions = compare_reports(base, now, thresholds, n, min_count, allow_missing);
    cJSON_Delete(base);
    cJSON_Delete(now);
    if (pi_finish_stdout(compare_out) != 0)
        return PI_EXIT_BAD_INPUT;
    return regressions ? PI_EXIT_REGRESSION : PI_EXIT_OK;
}
