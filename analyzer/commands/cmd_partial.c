/*
 * cmd_partial.c - `profinject-analyze partial [--exact] [--warmup N] FILE
 * -o OUT`: one trace file's pass written to a partial file
 * (analysis/pass/partial.h), the map step that a Slurm array, Dask or
 * Spark runs once a rank; `merge` makes the report of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/pass/partial_pass.h"
#include "commands.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: profinject-analyze partial [--exact] [--warmup N] FILE -o OUT\n"
            "  one trace file read into OUT, a partial for `profinject-analyze merge`; OUT a\n"
            "  directory: OUT/NAME.pipartial for FILE NAME.pitrace.zst. --exact and --warmup\n"
            "  as for report; every partial of one merge must be made with the same ones.\n"
            "  Exit status: 0, 1 usage, 2 the file could not be opened (no partial), or had a\n"
            "  read error partway (the partial of what was read is written, and merge exits 2\n"
            "  too, as report does), or OUT could not be written.\n");
}

/* OUT, or OUT/NAME.pipartial where OUT is a directory */
static char *output_path(const char *trace, const char *out)
{
    struct stat st;
    if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
        return strdup(out);
    const char *name = strrchr(trace, '/') ? strrchr(trace, '/') + 1 : trace;
    size_t stem = strlen(name);
    if (stem > 12 && strcmp(name + stem - 12, ".pitrace.zst") == 0)
        stem -= 12;
    size_t size = strlen(out) + stem + 16;
    char *path = malloc(size);
    if (path)
        snprintf(path, size, "%s/%.*s.pipartial", out, (int)stem, name);
    return path;
}

/* The partial must not overwrite its own trace (by any name). */
static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int pi_cmd_partial(int argc, char **argv)
{
    struct pi_analysis_options options;
    memset(&options, 0, sizeof(options));
    const char *trace = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return PI_EXIT_OK;
        } else if (strcmp(argv[i], "--exact") == 0) {
            options.exact = 1;
        } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
            double steps;
            if (pi_parse_count("--warmup", argv[++i], 0, 1000000, &steps) != 0)
                return PI_EXIT_USAGE;
            options.warmup_steps = (unsigned)steps;
        } else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) &&
                   i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] != '-' && !trace) {
            trace = argv[i];
        } else {
            fprintf(stderr, "profinject-analyze: partial: unexpected %s\n", argv[i]);
            usage(stderr);
            return PI_EXIT_USAGE;
        }
    }
    if (!trace || !out) {
        usage(stderr);
        return PI_EXIT_USAGE;
    }
    char *path = output_path(trace, out);
    if (!path) {
        fprintf(stderr, "profinject-analyze: out of memory\n");
        return PI_EXIT_BAD_INPUT;
    }
    if (same_file(path, trace)) {
        fprintf(stderr, "profinject-analyze: -o %s is the input trace: refusing to overwrite it\n",
                path);
        free(path);
        return PI_EXIT_USAGE;
    }
    char why[700];
    int made = pi_partial_make(trace, path, &options, why, sizeof(why));
    if (made < 0)
        fprintf(stderr, "profinject-analyze: %s\n", why);
    free(path);
    return made == 0 ? PI_EXIT_OK : PI_EXIT_BAD_INPUT;
}
