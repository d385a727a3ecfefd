/*
 * cmd_compare.c - `profinject-analyze compare BASE NEW [--threshold M=P%]...`:
 * a regression check for CI. BASE and NEW are trace files, directories or
 * JSON reports (--json). Every call present in both is compared on each
 * thresholded percentile, and the peak memory on "peak_memory"; the exit
 * status is 3 when anything got worse than allowed.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "commands.h"
#include "reports/report.h"

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
                 "[--min-count N]\n"
                 "  BASE, NEW   trace file, trace directory, or a report written with --json\n"
                 "  METRIC      p50 p90 p95 p99 p99.9 max mean peak_memory "
                 "(default: p95=10%% peak_memory=10%%)\n"
                 "  --min-count calls seen fewer times on either side are not compared "
                 "(default 20)\n"
                 "exit status: 0 no regression, 3 regression, 1 usage, 2 unreadable input\n");
}

static cJSON *load_json_report(const char *path)
{
    size_t len = strlen(path);
    if (len < 5 || strcmp(path + len - 5, ".json") != 0)
        return NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
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
    cJSON *schema = root ? cJSON_GetObjectItem(root, "schema") : NULL;
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "profinject-report") != 0) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static cJSON *load_side(const char *path)
{
    cJSON *report = load_json_report(path);
    if (report)
        return report;
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
static double peak_memory(const cJSON *report)
{
    const cJSON *host = cJSON_GetObjectItem(report, "host_memory");
    if (host)
        return number(host, "rss_peak_bytes");
    double peak = 0;
    const cJSON *process;
    cJSON_ArrayForEach(process, cJSON_GetObjectItem(report, "processes")) {
        double rss = number(cJSON_GetObjectItem(process, "memory"), "rss_peak_bytes");
        peak = rss > peak ? rss : peak;
    }
    return peak;
}

static const cJSON *find_call(const cJSON *report, const cJSON *like)
{
    const char *group = cJSON_GetObjectItem(like, "group")->valuestring;
    const char *name = cJSON_GetObjectItem(like, "name")->valuestring;
    const char *klass = cJSON_GetObjectItem(like, "class")->valuestring;
    const cJSON *call;
    cJSON_ArrayForEach(call, cJSON_GetObjectItem(report, "latency"))
        if (strcmp(cJSON_GetObjectItem(call, "group")->valuestring, group) == 0 &&
            strcmp(cJSON_GetObjectItem(call, "name")->valuestring, name) == 0 &&
            strcmp(cJSON_GetObjectItem(call, "class")->valuestring, klass) == 0)
            return call;
    return NULL;
}

/* Print one comparison; return 1 when it is a regression. */
static int check(const char *what, const char *metric, double base, double now, double allowed)
{
    double change = base > 0 ? now / base - 1 : (now > 0 ? 1e9 : 0);
    int worse = change > allowed;
    printf("  %-34.34s %-11s %14.0f %14.0f %+8.1f%% %7.0f%%  %s\n", what, metric, base, now,
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
                                        "peak_memory"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(t->metric, known[i]) == 0)
            return 0;
    return -1;
}

static int compare_reports(const cJSON *base, const cJSON *now, const struct threshold *t, int n,
                           double min_count)
{
    int regressions = 0, compared = 0;
    printf("  %-34s %-11s %14s %14s %9s %8s\n", "what", "metric", "base", "new", "change",
           "allowed");
    for (int k = 0; k < n; k++) {
        if (strcmp(t[k].metric, "peak_memory") == 0) {
            regressions += check("peak memory (RSS, bytes)", "peak", peak_memory(base),
                                 peak_memory(now), t[k].fraction);
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
            snprintf(what, sizeof(what), "%s %s %s (ns)",
                     cJSON_GetObjectItem(call, "group")->valuestring,
                     cJSON_GetObjectItem(call, "name")->valuestring,
                     cJSON_GetObjectItem(call, "class")->valuestring);
            regressions += check(what, t[k].metric, number(call, key), number(other, key),
                                 t[k].fraction);
            compared++;
        }
    }
    printf("%d compared, %d regressions\n", compared, regressions);
    return regressions;
}

int pi_cmd_compare(int argc, char **argv)
{
    struct threshold thresholds[MAX_THRESHOLDS];
    int n = 0;
    double min_count = 20;
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
    }
    cJSON *base = load_side(sides[0]), *now = base ? load_side(sides[1]) : NULL;
    if (!base || !now) {
        fprintf(stderr, "profinject-analyze: cannot read %s as traces or a JSON report\n",
                base ? sides[1] : sides[0]);
        cJSON_Delete(base);
        return PI_EXIT_BAD_INPUT;
    }
    int regressions = compare_reports(base, now, thresholds, n, min_count);
    cJSON_Delete(base);
    cJSON_Delete(now);
    return regressions ? PI_EXIT_REGRESSION : PI_EXIT_OK;
}
